import Crypto
import Foundation
import GRDB
import Synchronization

/// One sealed segment as read from the file (its row and its blocks' compressed bytes), before decoding.
///
/// Read on the thread that owns the connection; decoded anywhere (`decode`), since decoding needs no database.
struct RawSegment: Sendable {
    struct Block: Sendable {
        var id: Int64
        var stream: String
        var firstVersion: Int64
        var lastVersion: Int64
        /// The compressed frame (a slice of the segment's packed bytes when read whole).
        var data: ArraySlice<UInt8>
    }

    var first: Int64
    var last: Int64
    var previousHash: [UInt8]
    var lastHash: [UInt8]
    var checks: [UInt8]
    var dictionary: DecompressionDictionary?
    var blocks: [Block]
    /// Positions hashed over bare names (before apps were namespaces): see `EventStore.namespacedFrom`.
    var namespacedFrom: Int64

    static let segmentSQL = """
        SELECT first_position, last_position, first_block, blocks, dictionary, previous_hash, last_hash, checks
        FROM segments
        """

    /// The segment starting at `first`, or nil when there is none. A segment whose blocks or dictionary cannot
    /// be read throws a `RowDecodingError` at its first position.
    static func read(
        first: Int64, db: Database, names: inout [Int64: String], loader: PayloadDecoder, namespacedFrom: Int64
    ) throws -> RawSegment? {
        let statement = try db.cachedStatement(sql: segmentSQL + " WHERE first_position = ?")
        statement.bind(first, at: 1)
        defer { statement.resetBindings() }
        guard try statement.stepRow(db) else { return nil }
        let last = statement.int64(at: 1)
        let firstBlock = statement.int64(at: 2)
        let blockCount = statement.int64(at: 3)
        let dictionaryID = statement.optionalInt64(at: 4)
        var segment = RawSegment(
            first: first, last: last, previousHash: Array(statement.blob(at: 5)), lastHash: Array(statement.blob(at: 6)),
            checks: Array(statement.blob(at: 7)), dictionary: nil, blocks: [], namespacedFrom: namespacedFrom)
        do {
            segment.dictionary = try dictionaryID.map { try loader.loaded($0, db: db) }
            segment.blocks = try readBlocks(from: firstBlock, count: blockCount, db: db, names: &names)
        } catch let error as StoreError {
            throw RowDecodingError(position: first, error: error)
        }
        return segment
    }

    static func readBlocks(from firstBlock: Int64, count: Int64, db: Database, names: inout [Int64: String]) throws
        -> [Block]
    {
        let statement = try db.cachedStatement(
            sql: "SELECT id, stream, first_version, last_version, data, data_offset, data_length, segment FROM segment_blocks WHERE id >= ? AND id < ? ORDER BY id")
        statement.bind(firstBlock, at: 1)
        statement.bind(firstBlock + count, at: 2)
        defer { statement.resetBindings() }
        var blocks: [Block] = []
        blocks.reserveCapacity(Int(clamping: min(count, 65_536)))
        // The segment's packed bytes, read whole once: every block of the segment is decoded.
        var packed: [UInt8]?
        while try statement.stepRow(db) {
            let segment = statement.int64(at: 7)
            blocks.append(try block(statement, db: db, names: &names) { offset, length in
                let bytes = try packed ?? SegmentData.whole(segment, db: db)
                packed = bytes
                return bytes[try SegmentData.range(offset: offset, length: length, size: bytes.count)]
            })
        }
        guard blocks.count == count else {
            throw StoreError(.corruptPayload, "the segment lists \(count) blocks but \(blocks.count) are stored")
        }
        return blocks
    }

    /// The block at the statement's current row (`id, stream, first_version, last_version, data, data_offset,
    /// data_length`): its bytes are `data` in blocks sealed before 003_packed_segments.sql, else the range
    /// `packed(offset, length)` of its segment's `segment_data`, which checks the stored range
    /// (`SegmentData.range`).
    static func block(
        _ statement: Statement, db: Database, names: inout [Int64: String],
        packed: (_ offset: Int64, _ length: Int64) throws -> ArraySlice<UInt8>
    ) throws -> Block {
        let id = statement.int64(at: 0)
        let streamID = statement.int64(at: 1)
        let stream: String
        if let known = names[streamID] {
            stream = known
        } else {
            stream = try EventReader.streamName(streamID, db: db)
            if names.count >= 65_536 { names.removeAll(keepingCapacity: true) }
            names[streamID] = stream
        }
        let data: ArraySlice<UInt8>
        if statement.isNull(at: 6) {
            data = ArraySlice(statement.blob(at: 4))
        } else {
            data = try packed(statement.int64(at: 5), statement.int64(at: 6))
        }
        return Block(
            id: id, stream: stream, firstVersion: statement.int64(at: 2), lastVersion: statement.int64(at: 3),
            data: data)
    }

    /// Decompresses `block` and calls `body` with each of its records, in order (lent as bytes of the block: valid
    /// only inside `body`). A block whose version range, frame or records do not fit the segment `first…last`
    /// throws, naming the block: the one reader of a block for `decode`, `lend` and `chainHashes`.
    static func forEachRecord(
        of block: Block, first: Int64, last: Int64, dictionary: DecompressionDictionary?, decoder: PayloadDecoder,
        _ body: (SegmentBlock.RecordView) -> Void
    ) throws {
        let count = block.lastVersion - block.firstVersion + 1
        guard count >= 1, count <= last - first + 1 else {
            throw StoreError(.corruptPayload, "block \(block.id) has an impossible version range")
        }
        let raw = try block.data.withUnsafeBytes { try decoder.decompress($0, using: dictionary) }
        var failure: SegmentBlock.BlockError?
        raw.withUnsafeBytes { bytes in
            do throws(SegmentBlock.BlockError) {
                try SegmentBlock.forEachRecord(bytes, count: Int(count), segmentStart: first, segmentEnd: last) { record in
                    body(record)
                    return true
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw StoreError(.corruptPayload, "block \(block.id) does not decode: \(failure.reason)") }
    }

    /// A block's events (stream and version from its row), hash left empty: the chain needs the whole segment.
    /// The block's events that `keep` keeps (it sees each as a view, so an event it drops is never built).
    static func events(
        of block: Block, first: Int64, last: Int64, dictionary: DecompressionDictionary?, decoder: PayloadDecoder,
        keep: (EventView) -> Bool = { _ in true }
    ) throws -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        try append(of: block, first: first, last: last, dictionary: dictionary, decoder: decoder, keep: keep, to: &events)
        return events
    }

    /// `events(of:…)` appended to `events` (a reader of several blocks builds one array: appending each block's
    /// array to it copied every event once more).
    static func append(
        of block: Block, first: Int64, last: Int64, dictionary: DecompressionDictionary?, decoder: PayloadDecoder,
        keep: (EventView) -> Bool, to events: inout [RecordedEvent]
    ) throws {
        events.reserveCapacity(
            events.count + Int(clamping: min(max(block.lastVersion - block.firstVersion + 1, 0), last - first + 1)))
        try forEachRecord(of: block, first: first, last: last, dictionary: dictionary, decoder: decoder) { record in
            let view = view(of: record, in: block)
            if keep(view) { events.append(view.recorded()) }
        }
    }

    /// A record of `block` as an event view (its stream and version from the block's row).
    static func view(of record: SegmentBlock.RecordView, in block: Block) -> EventView {
        EventView(
            position: record.position, stream: block.stream, version: block.firstVersion + Int64(record.index),
            id: record.id, type: record.type, at: record.at, recordedAt: record.recordedAt, payload: record.payload,
            payloadOwner: nil)
    }

    /// Every event of the segment lent to `transform` as a view (block by block, straight from its decompressed
    /// bytes: no event is built), its value filed under its slot (position − first) to be taken out in position
    /// order. The same checks as `decode` except the check values: views carry no hash.
    func lend<T>(
        with decoder: PayloadDecoder, _ transform: (EventView) -> T
    ) -> Result<SlotBuffer<T>, RowDecodingError> {
        let count = Int(last - first + 1)
        guard count >= 1 else { return .failure(failure("its row is malformed")) }
        let slots = SlotBuffer<T>(count: count)
        for block in blocks {
            var twice: Int64?
            do {
                try Self.forEachRecord(of: block, first: first, last: last, dictionary: dictionary, decoder: decoder) {
                    record in
                    guard twice == nil else { return }
                    // Moved into its slot (a copy and a destroy of each value before, ~3 % of a sealed rebuild).
                    let value = transform(Self.view(of: record, in: block))
                    if !slots.put(consume value, at: Int(record.position - first)) { twice = record.position }
                }
            } catch let error as StoreError {
                return .failure(failure(error.message))
            } catch {
                return .failure(failure("\(error)"))
            }
            if let twice { return .failure(failure("position \(twice) is stored twice")) }
        }
        if let missing = slots.firstEmpty {
            return .failure(failure("position \(first + Int64(missing)) is missing from it"))
        }
        return .success(slots)
    }

    /// Every event of the segment in position order, each with its chain hash computed from the segment's
    /// `previous_hash`, and the first position whose hash does not match its stored check value (`checkWidth`
    /// bytes; the last position's also its whole `last_hash`). Bytes that do not decode, or positions missing or
    /// twice, fail the whole segment at its first position.
    func decode(with decoder: PayloadDecoder, hashes: Bool = true) -> DecodedSegment {
        let count = Int(last - first + 1)
        guard count >= 1, let width = Self.checkWidth(checks: checks.count, events: count), previousHash.count == 32,
            lastHash.count == 32
        else {
            return DecodedSegment(events: [], mismatch: nil, error: failure("its row is malformed"))
        }
        var events: [RecordedEvent] = []
        events.reserveCapacity(count)
        for block in blocks {
            do {
                events += try Self.events(of: block, first: first, last: last, dictionary: dictionary, decoder: decoder)
            } catch let error as StoreError {
                return DecodedSegment(events: [], mismatch: nil, error: failure(error.message))
            } catch {
                return DecodedSegment(events: [], mismatch: nil, error: failure("\(error)"))
            }
            guard events.count <= count else {
                return DecodedSegment(events: [], mismatch: nil, error: failure("it holds more events than positions"))
            }
        }
        // Sorting moves the events (no copies); then position i must be at index i - first.
        events.sort { $0.position < $1.position }
        for (index, event) in events.enumerated() where event.position != first + Int64(index) {
            let reason =
                event.position < first + Int64(index)
                ? "position \(event.position) is stored twice" : "position \(first + Int64(index)) is missing from it"
            return DecodedSegment(events: [], mismatch: nil, error: failure(reason))
        }
        guard events.count == count else {
            return DecodedSegment(
                events: [], mismatch: nil, error: failure("position \(first + Int64(events.count)) is missing from it"))
        }
        guard hashes else { return DecodedSegment(events: events, mismatch: nil, error: nil) }
        var hasher = ChainHasher()
        var previous = previousHash
        var mismatch: Int64?
        checks.withUnsafeBytes { checks in
            for index in events.indices {
                let hash = hasher.hash(events[index], namespacedFrom: namespacedFrom, previous: previous)
                if mismatch == nil {
                    // The last position's check value is stored too: a change to it is damage like any other.
                    let matches =
                        hash.withUnsafeBytes { hash in
                            memcmp(hash.baseAddress!, checks.baseAddress! + index * width, width) == 0
                        }
                        && (index < count - 1 || hash == lastHash)
                    if !matches { mismatch = events[index].position }
                }
                events[index].hash = hash
                previous = hash
            }
        }
        return DecodedSegment(events: events, mismatch: mismatch, error: nil)
    }

    /// Bytes of each event's check value in a segment of `events` events whose `checks` column holds `checks`
    /// bytes: 2 since 2026-11-29, 4 in segments sealed before (nil: neither, the row is malformed).
    static func checkWidth(checks: Int, events: Int) -> Int? {
        [Self.sealedCheckWidth, 4].first { checks == events * $0 }
    }

    /// Bytes of the check value `seal` stores for each event: the first 2 of its hash (4 cost 2 bytes more per
    /// sealed event, ~2 % of a sealed file). A changed event is named at its position unless its new hash starts
    /// with the same 2 bytes (one chance in 65,536); then a later one is named, since every later hash of the
    /// chain differs too and the segment's last event is held to its whole `last_hash`: damage is always found.
    static let sealedCheckWidth = 2

    /// The chain hash of every position of the segment, 32 bytes each back to back, computed straight from its
    /// blocks' bytes without building its events (what a point read needs from a segment whose hashes are not
    /// cached; building, sorting and dropping 4,096 events was a third of `decode`'s cost there). The prefix of
    /// each hash (every field but the previous hash: most of the work) does not depend on the chain, so two
    /// threads take alternate blocks, decompress them and compute their records' prefixes; the chain is then
    /// finished in position order. The same checks as `decode`, except the check values: a point read shows
    /// what the chain computes.
    func chainHashes(decoders: DecoderPool) -> Result<[UInt8], RowDecodingError> {
        let count = Int(last - first + 1)
        guard count >= 1, previousHash.count == 32 else { return .failure(failure("its row is malformed")) }
        let threads = blocks.count >= Self.parallelBlocks ? 2 : 1
        let results = Mutex([Prefixes?](repeating: nil, count: threads))
        DispatchQueue.concurrentPerform(iterations: threads) { part in
            let done = decoders.withHandle { decoder in
                self.prefixes(ofBlocksFrom: part, by: threads, count: count, decoder: decoder)
            }
            results.withLock { $0[part] = done }
        }
        let parts = results.withLock { $0 }.compactMap { $0 }
        if let failed = parts.compactMap(\.failure).min(by: { $0.block < $1.block }) {
            return .failure(failure(failed.reason))
        }
        var prefixes = [SHA256?](repeating: nil, count: count)
        for part in parts {
            for (slot, state) in part.states {
                guard prefixes[slot] == nil else {
                    return .failure(failure("position \(first + Int64(slot)) is stored twice"))
                }
                prefixes[slot] = state
            }
        }
        if let missing = prefixes.firstIndex(where: { $0 == nil }) {
            return .failure(failure("position \(first + Int64(missing)) is missing from it"))
        }
        var hashes = [UInt8](repeating: 0, count: count * 32)
        hashes.withUnsafeMutableBytes { hashes in
            previousHash.withUnsafeBytes { genesis in
                for slot in 0..<count {
                    let state = prefixes[slot]!
                    prefixes[slot] = nil  // the state's only reference now: finishing it copies nothing
                    let previous = slot == 0 ? genesis : UnsafeRawBufferPointer(rebasing: hashes[(slot - 1) * 32..<slot * 32])
                    ChainHasher.finish(
                        state, previous: previous,
                        into: UnsafeMutableRawBufferPointer(rebasing: hashes[slot * 32..<(slot + 1) * 32]))
                }
            }
        }
        return .success(hashes)
    }

    /// Segments of at least this many blocks are hashed on two threads (fewer are not worth the hand-off).
    static let parallelBlocks = 64

    /// One thread's share of `chainHashes`: the prefix state of each record of its blocks, by slot (position −
    /// first), or where its first bad block stopped it.
    private struct Prefixes: @unchecked Sendable {  // SHA256 holds a class reference; each state has one owner
        var states: [(slot: Int, state: SHA256)] = []
        var failure: (block: Int, reason: String)?
    }

    /// The prefixes of the records of blocks `part`, `part + parts`, … (a block's index in `blocks`).
    private func prefixes(ofBlocksFrom part: Int, by parts: Int, count: Int, decoder: PayloadDecoder) -> Prefixes {
        var result = Prefixes()
        result.states.reserveCapacity(count / parts + 64)
        var hasher = ChainHasher()
        for index in stride(from: part, to: blocks.count, by: parts) {
            let block = blocks[index]
            var name = block.stream
            do {
                try name.withUTF8 { name in
                    try Self.forEachRecord(
                        of: block, first: first, last: last, dictionary: dictionary, decoder: decoder
                    ) { record in
                        result.states.append(
                            (Int(record.position - first),
                             prefix(record, of: block, name: UnsafeRawBufferPointer(name), &hasher)))
                    }
                }
            } catch let error as StoreError {
                result.failure = (index, error.message)
            } catch {
                result.failure = (index, "\(error)")
            }
            if result.failure != nil { break }
        }
        return result
    }

    /// A record's prefix state: its stream and version from the block's row, its stream and id bare before
    /// `namespacedFrom` (as `ChainHasher.hash(_:namespacedFrom:previous:)`).
    private func prefix(
        _ record: SegmentBlock.RecordView, of block: Block, name: UnsafeRawBufferPointer, _ hasher: inout ChainHasher
    ) -> SHA256 {
        let version = block.firstVersion + Int64(record.index)
        guard record.position < namespacedFrom else {
            return hasher.prefix(
                position: record.position, stream: name, version: version, id: record.id, type: record.type,
                at: record.at, recordedAt: record.recordedAt, payload: record.payload)
        }
        var bareStream = Namespaced.name(block.stream)
        var bareID = Namespaced.name(String(decoding: record.id, as: UTF8.self))
        return bareStream.withUTF8 { stream in
            bareID.withUTF8 { id in
                hasher.prefix(
                    position: record.position, stream: UnsafeRawBufferPointer(stream), version: version,
                    id: UnsafeRawBufferPointer(id), type: record.type, at: record.at, recordedAt: record.recordedAt,
                    payload: record.payload)
            }
        }
    }

    private func failure(_ reason: String) -> RowDecodingError {
        RowDecodingError(
            position: first,
            error: StoreError(.corruptPayload, "the segment of positions \(first)…\(last) does not decode: \(reason)"))
    }
}

/// A segment's events in position order with their chain hashes.
struct DecodedSegment: Sendable {
    var events: [RecordedEvent]
    /// The first position whose recomputed hash differs from the stored check value (nil: every one matches).
    var mismatch: Int64?
    /// Set when the segment does not decode (no events then).
    var error: RowDecodingError?
}
