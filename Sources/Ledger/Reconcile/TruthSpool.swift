import ActivityModel
import Crypto
import Foundation
import Synchronization

/// The truth feed sorted by activity, so the nightly job can merge it with the ledger's activities in id order with
/// bounded memory whatever the feed's size (a dictionary of a million items would cost hundreds of megabytes).
///
/// An external sort: parsed items are packed into a run of at most `runBytes`; a full run is sorted (activity,
/// then `at`, then line), cut to the item that wins for each activity (the latest `at`, ties the later line, no `at`
/// counting as earliest) and spilled to a temporary file that is unlinked as soon as it is opened, so nothing is
/// left behind, even by a killed process. The last run stays in memory. `merged()` merges the runs, applying the same
/// rule between them. A sorted feed costs one sort of an already sorted run (linear); the SQLite table this replaced
/// cost a B-tree insert per line, the longest part of reading the truth (BENCHMARKS.md session 21).
final class TruthSpool {
    /// One activity's winning item, as the nightly rules read it.
    struct Row: Sendable {
        var activity: String
        /// The state as canonical JSON text (`CanonicalJSON`); parsed only for activities that are folded.
        var stateText: String?
        var done: Bool
        var line: Int
        /// SHA-256 of `stateText` (`NightlyFacts.hash`), computed while the feed was parsed on every core: the
        /// merge compares it with the row's intended hash for every activity that has a state in the feed.
        var stateHash: NightlyFacts.StateHash?

        var state: JSONValue? { stateText.flatMap { try? JSONParser.parse($0) } }
    }

    private(set) var items = 0
    private(set) var lines = 0
    /// The first invalid lines (at most `invalidLimit`), and how many there were in all.
    private(set) var invalid: [InvalidTruthLine] = []
    private(set) var invalidCount = 0
    static let invalidLimit = 1000

    /// A run is sorted and spilled once its records take this many bytes.
    let runBytes: Int
    /// Room for the record that crosses `runBytes`.
    static let reserveSlack = 1 << 16
    /// What the merge's read buffers take at most, all runs together (each at least 4 KiB).
    static let mergeBufferBytes = 16 << 20
    /// The run being filled, then (after `load`) the last run, sorted.
    private var run = Run()
    /// The spilled runs: where each lies in `spill`.
    private var spilled: [Range<Int>] = []
    private var spill: SpillFile?

    init(runBytes: Int = 32 << 20) {
        self.runBytes = runBytes
    }

    /// Reads the whole feed; invalid lines are counted (and the first ones kept), never thrown.
    ///
    /// Lines are read 8,192 at a time and parsed in tasks (one per core) while the lines before them are packed
    /// into the run on the calling thread.
    func load(_ reader: JSONLinesReader, progress: (Int64) -> Void = { _ in }) async throws {
        var parsing: Task<[Parsed], Never>?
        while true {
            var batch = Batch()
            batch.bytes.reserveCapacity(Self.batchSize * 64)
            batch.lines.reserveCapacity(Self.batchSize)
            while batch.lines.count < Self.batchSize, let line = try reader.next() {
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                batch.append(line, number: reader.lineNumber)
            }
            let next = batch.lines.isEmpty ? nil : Task { [batch] in await TruthSpool.parse(batch) }
            if let parsing {
                try add(await parsing.value)
                progress(reader.bytesRead)
            }
            guard let next else { break }
            parsing = next
        }
        lines = reader.lineNumber
        run.sort()
    }

    static let batchSize = 8192

    /// Lines read together, in one buffer (not an array per line).
    struct Batch: Sendable {
        var bytes: [UInt8] = []
        var lines: [(number: Int, range: Range<Int>)] = []

        mutating func append(_ line: ArraySlice<UInt8>, number: Int) {
            let start = bytes.count
            bytes += line
            lines.append((number, start..<bytes.count))
        }
    }

    /// A line parsed and ready to pack (its state as canonical JSON, and that JSON's hash), or why it is invalid.
    enum Parsed: Sendable, Equatable {
        case item(TruthItem, canonicalState: [UInt8]?, hash: NightlyFacts.StateHash?)
        case invalid(InvalidTruthLine)

        init(number: Int, bytes: UnsafeBufferPointer<UInt8>) {
            if let (item, state) = TruthItem.scanned(bytes, number: number) {
                // The state's text is its canonical form: taken as read, no tree built.
                self = .item(item, canonical: state.map { Array(UnsafeBufferPointer(rebasing: bytes[$0])) })
                return
            }
            self.init(parsing: bytes, number: number)
        }

        /// An item with its state's canonical JSON and that JSON's SHA-256 (`NightlyFacts.StateHash`).
        private static func item(_ item: TruthItem, canonical: [UInt8]?) -> Parsed {
            .item(item, canonicalState: canonical, hash: canonical.map { bytes in
                var hasher = SHA256()
                bytes.withUnsafeBytes { hasher.update(bufferPointer: $0) }
                return .init(hasher.finalize())
            })
        }

        /// The line parsed in full (every line the plain reader leaves, and the answer it is held to).
        init(parsing bytes: UnsafeBufferPointer<UInt8>, number: Int) {
            do {
                var item = try TruthItem(line: bytes, number: number)
                let canonical = item.state.map(CanonicalJSON.bytes)
                item.state = nil
                self = .item(item, canonical: canonical)
            } catch {
                let reason = (error as? LedgerError)?.message ?? "\(error)"
                self = .invalid(InvalidTruthLine(line: number, reason: reason))
            }
        }
    }

    /// Parses a batch in `parallelism` chunks, in order.
    private static func parse(_ batch: Batch) async -> [Parsed] {
        let count = batch.lines.count
        let chunk = max(1024, (count + parallelism - 1) / parallelism)
        let starts = Array(stride(from: 0, to: count, by: chunk))
        @Sendable func parse(_ lines: Range<Int>) -> [Parsed] {
            batch.bytes.withUnsafeBufferPointer { buffer in
                batch.lines[lines].map { Parsed(number: $0.number, bytes: UnsafeBufferPointer(rebasing: buffer[$0.range])) }
            }
        }
        if starts.count == 1 { return parse(0..<count) }
        return await withTaskGroup(of: (Int, [Parsed]).self) { group in
            for (index, start) in starts.enumerated() {
                group.addTask { (index, parse(start..<min(start + chunk, count))) }
            }
            var parts = [[Parsed]](repeating: [], count: starts.count)
            for await (index, parsed) in group { parts[index] = parsed }
            return parts.flatMap { $0 }
        }
    }

    static let parallelism = max(1, min(4, ProcessInfo.processInfo.activeProcessorCount))

    private func add(_ batch: [Parsed]) throws {
        for parsed in batch {
            switch parsed {
            case .item(let item, let canonicalState, let hash):
                if run.bytes.count >= runBytes { try spillRun() }
                // Reserved whole (pages are touched as they fill): growing by doubling would copy the run and
                // hold twice its size at the moment it spills.
                if run.bytes.isEmpty { run.bytes.reserveCapacity(runBytes + Self.reserveSlack) }
                run.append(item, state: canonicalState, hash: hash)
                items += 1
            case .invalid(let line):
                invalidCount += 1
                if invalid.count < Self.invalidLimit { invalid.append(line) }
            }
        }
    }

    /// Sorts the run being filled, writes it to the spill file, and starts an empty one.
    private func spillRun() throws {
        run.sort()
        if spill == nil { spill = try SpillFile() }
        let start = spill!.size
        try run.write(to: spill!)
        spilled.append(start..<spill!.size)
        run = Run()
    }

    /// Distinct activities in the feed: a pass over the runs.
    func count() throws -> Int {
        let merge = try merged()
        var count = 0
        while true {
            let page = try merge.next(limit: 4096)
            if page.isEmpty { return count }
            count += page.count
        }
    }

    /// A new pass over the feed's winning items in activity order (SQLite's binary order of the UTF-8 bytes).
    /// Readable from any task once `load` returned.
    func merged() throws -> Merge {
        // The spilled runs' read buffers share `mergeBufferBytes` (a huge feed has many runs; memory stays bounded).
        let buffer = max(4096, min(1 << 18, Self.mergeBufferBytes / max(1, spilled.count)))
        var sources = spilled.map { Source.file(SpillReader(file: spill!, range: $0, bufferBytes: buffer)) }
        sources.append(.memory(run, next: 0))
        return try Merge(sources: sources)
    }

    /// Packed items: records in `bytes`, found through `keys` (sorted and cut to one per activity by `sort`).
    ///
    /// A record is a 25-byte header (activity length u32, state length i32 or -1 for none, done u8, at i64 with
    /// `Int64.min` for none, line i64; little-endian) followed by the activity's UTF-8, then, with a state, the
    /// state's canonical JSON and its 32-byte SHA-256.
    fileprivate struct Run: Sendable {
        struct Key: Sendable {
            /// The activity's first 8 bytes, big-endian, zero-padded: orders most pairs without reading the record
            /// (ids hold no NUL byte, so the padding sorts a prefix first, as the bytes do).
            var prefix: UInt64
            var offset: Int
        }

        var bytes: [UInt8] = []
        var keys: [Key] = []

        static let headerSize = 25

        mutating func append(_ item: TruthItem, state: [UInt8]?, hash: NightlyFacts.StateHash?) {
            let offset = bytes.count
            var activity = item.activity
            activity.withUTF8 { utf8 in
                Self.put(UInt32(utf8.count), into: &bytes)
                Self.put(UInt32(bitPattern: Int32(state?.count ?? -1)), into: &bytes)
                bytes.append(item.done ? 1 : 0)
                Self.put(UInt64(bitPattern: item.at?.milliseconds ?? .min), into: &bytes)
                Self.put(UInt64(item.line), into: &bytes)
                bytes.append(contentsOf: utf8)
                var prefix: UInt64 = 0
                for index in 0..<8 { prefix = prefix << 8 | UInt64(index < utf8.count ? utf8[index] : 0) }
                keys.append(Key(prefix: prefix, offset: offset))
            }
            if let state, let hash {
                bytes.append(contentsOf: state)
                hash.append(to: &bytes)
            }
        }

        private static func put<T: FixedWidthInteger>(_ value: T, into bytes: inout [UInt8]) {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }

        /// Sorts the keys by (activity, at, line) and keeps the last of each activity: the winning item.
        mutating func sort() {
            bytes.withUnsafeBytes { raw in
                keys.sort { a, b in
                    if a.prefix != b.prefix { return a.prefix < b.prefix }
                    let order = Record(raw, at: a.offset).compare(Record(raw, at: b.offset))
                    return order < 0
                }
                var kept = 0
                for index in keys.indices {
                    let isLast =
                        index == keys.count - 1 || keys[index].prefix != keys[index + 1].prefix
                        || !Record(raw, at: keys[index].offset)
                            .sameActivity(as: Record(raw, at: keys[index + 1].offset))
                    if isLast {
                        keys[kept] = keys[index]
                        kept += 1
                    }
                }
                keys.removeLast(keys.count - kept)
            }
        }

        /// Writes the records in key order.
        func write(to file: SpillFile) throws {
            var out: [UInt8] = []
            out.reserveCapacity(1 << 20)
            try bytes.withUnsafeBytes { raw in
                for key in keys {
                    let record = Record(raw, at: key.offset)
                    out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[key.offset..<key.offset + record.size]))
                    if out.count >= 1 << 20 {
                        try file.append(out)
                        out.removeAll(keepingCapacity: true)
                    }
                }
            }
            try file.append(out)
        }
    }

    /// A view of one packed record.
    fileprivate struct Record {
        let base: UnsafeRawBufferPointer
        let offset: Int

        init(_ base: UnsafeRawBufferPointer, at offset: Int) {
            self.base = base
            self.offset = offset
        }

        private func load<T: FixedWidthInteger>(_: T.Type, _ at: Int) -> T {
            T(littleEndian: base.loadUnaligned(fromByteOffset: offset + at, as: T.self))
        }

        var activityCount: Int { Int(load(UInt32.self, 0)) }
        var stateCount: Int { Int(load(Int32.self, 4)) }
        var done: Bool { base[offset + 8] != 0 }
        var at: Int64 { load(Int64.self, 9) }
        var line: Int { Int(load(Int64.self, 17)) }
        var size: Int { Run.headerSize + activityCount + (stateCount < 0 ? 0 : stateCount + Self.hashSize) }
        static let hashSize = NightlyFacts.StateHash.byteCount

        var activity: UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: base[offset + Run.headerSize..<offset + Run.headerSize + activityCount])
        }

        /// -1, 0 or 1 by (activity bytes, at, line).
        func compare(_ other: Record) -> Int {
            let (a, b) = (activity, other.activity)
            let common = min(a.count, b.count)
            if common > 0 {
                let order = memcmp(a.baseAddress!, b.baseAddress!, common)
                if order != 0 { return order < 0 ? -1 : 1 }
            }
            if a.count != b.count { return a.count < b.count ? -1 : 1 }
            if at != other.at { return at < other.at ? -1 : 1 }
            return line < other.line ? -1 : (line == other.line ? 0 : 1)
        }

        func sameActivity(as other: Record) -> Bool {
            let (a, b) = (activity, other.activity)
            return a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
        }

        /// The item, and its `at` for the rule between runs.
        var item: Item {
            let stateStart = offset + Run.headerSize + activityCount
            let stateEnd = stateStart + max(0, stateCount)
            var row = Row(activity: String(decoding: activity, as: UTF8.self), stateText: nil, done: done, line: line)
            if stateCount >= 0 {
                row.stateText = String(decoding: UnsafeRawBufferPointer(rebasing: base[stateStart..<stateEnd]), as: UTF8.self)
                row.stateHash = .init(UnsafeRawBufferPointer(rebasing: base[stateEnd..<stateEnd + Self.hashSize]))
            }
            return Item(row: row, at: at)
        }
    }

    /// A merge head: the row and the `at` that decides between runs.
    fileprivate struct Item: Sendable {
        var row: Row
        var at: Int64

        /// Whether `self` wins over `other`, an item of the same activity: the later `at`, ties the later line.
        func wins(over other: Item) -> Bool { (at, row.line) > (other.at, other.row.line) }
    }

    fileprivate enum Source: Sendable {
        case memory(Run, next: Int)
        case file(SpillReader)

        mutating func next() throws -> Item? {
            switch self {
            case .memory(let run, let next):
                guard next < run.keys.count else { return nil }
                self = .memory(run, next: next + 1)
                return run.bytes.withUnsafeBytes { Record($0, at: run.keys[next].offset).item }
            case .file(let reader):
                return try reader.next()
            }
        }
    }

    /// The runs merged, a page at a time (the nightly scan reads pages ahead in a task, one after the other).
    final class Merge: Sendable {
        private struct State: Sendable {
            var sources: [Source]
            var heads: [Item?]
        }

        private let state: Mutex<State>

        fileprivate init(sources: [Source]) throws {
            var sources = sources
            var heads: [Item?] = []
            for index in sources.indices { heads.append(try sources[index].next()) }
            state = Mutex(State(sources: sources, heads: heads))
        }

        /// Up to `limit` items after the last page, in activity order; empty at the end.
        func next(limit: Int = 4096) throws -> [Row] {
            try state.withLock { state in
                var rows: [Row] = []
                rows.reserveCapacity(min(limit, 4096))
                if state.sources.count == 1 {
                    while rows.count < limit, let head = state.heads[0] {
                        rows.append(head.row)
                        state.heads[0] = try state.sources[0].next()
                    }
                    return rows
                }
                while rows.count < limit {
                    // The smallest activity among the heads: a linear pass, one comparison per run and item. A run
                    // holds ~32 MiB of items (~400,000 of the bench's lines), so a feed of tens of millions of lines
                    // has tens of runs; far beyond that, a heap would be the better choice.
                    var first: Int?
                    for (index, head) in state.heads.enumerated() {
                        guard let head else { continue }
                        if let current = first,
                            !NightlyScan.precedes(head.row.activity, state.heads[current]!.row.activity)
                        {
                            continue
                        }
                        first = index
                    }
                    guard let first else { break }
                    let activity = state.heads[first]!.row.activity
                    var winner: Item?
                    for index in state.heads.indices where state.heads[index]?.row.activity == activity {
                        let head = state.heads[index]!
                        if winner.map({ head.wins(over: $0) }) ?? true { winner = head }
                        state.heads[index] = try state.sources[index].next()
                    }
                    rows.append(winner!.row)
                }
                return rows
            }
        }
    }

    /// The spill file: opened and unlinked at once, so only the descriptor keeps it.
    fileprivate final class SpillFile: Sendable {
        let fd: Int32
        private let written = Mutex(0)

        init() throws {
            let path =
                FileManager.default.temporaryDirectory.path + "/ledger-truth-\(UUID().uuidString.prefix(12)).spool"
            fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0o600)
            guard fd >= 0 else {
                throw LedgerError(
                    .storage, "cannot create the truth spool \(path): \(String(cString: strerror(errno)))")
            }
            unlink(path)
        }

        deinit { close(fd) }

        var size: Int { written.withLock { $0 } }

        func append(_ bytes: [UInt8]) throws {
            try written.withLock { size in
                var done = 0
                while done < bytes.count {
                    let count = bytes.withUnsafeBytes { raw in
                        pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(size + done))
                    }
                    guard count > 0 else {
                        throw LedgerError(.storage, "cannot write the truth spool: \(String(cString: strerror(errno)))")
                    }
                    done += count
                }
                size += done
            }
        }
    }

    /// Reads one spilled run's records in order, through a buffer. Used under its merge's lock only.
    fileprivate final class SpillReader: @unchecked Sendable {
        private let file: SpillFile
        private var position: Int
        private let end: Int
        private var buffer: [UInt8] = []
        private var start = 0

        private let bufferBytes: Int

        init(file: SpillFile, range: Range<Int>, bufferBytes: Int) {
            self.bufferBytes = bufferBytes
            self.file = file
            position = range.lowerBound
            end = range.upperBound
        }

        func next() throws -> Item? {
            guard try ensure(Run.headerSize) else { return nil }
            let size = buffer.withUnsafeBytes { Record($0, at: start).size }
            guard try ensure(size) else {
                throw LedgerError(.storage, "the truth spool ends inside a record")
            }
            defer { start += size }
            return buffer.withUnsafeBytes { Record($0, at: start).item }
        }

        /// Makes `count` bytes available from `start`; false at the run's end.
        private func ensure(_ count: Int) throws -> Bool {
            if buffer.count - start >= count { return true }
            buffer.removeFirst(start)
            start = 0
            let want = min(max(count - buffer.count, bufferBytes), end - position)
            guard want > 0 else { return false }
            let old = buffer.count
            buffer.append(contentsOf: repeatElement(0, count: want))
            let read = buffer.withUnsafeMutableBytes { raw in
                pread(file.fd, raw.baseAddress! + old, want, off_t(position))
            }
            guard read == want else {
                throw LedgerError(.storage, "cannot read the truth spool: \(String(cString: strerror(errno)))")
            }
            position += want
            return buffer.count - start >= count
        }
    }
}
