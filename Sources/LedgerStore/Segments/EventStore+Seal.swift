import CZstd
import Foundation
import GRDB
import GRDBSQLite

/// What one call of `seal` did.
public struct SealReport: Sendable, Hashable {
    /// Segments written by this call.
    public var segments: Int
    /// Events moved from rows into those segments.
    public var events: Int64
    /// Stored bytes of those events before (their row payloads) and after (their blocks and check values).
    public var rowPayloadBytes: Int64
    public var sealedBytes: Int64
    /// The last sealed position after the call (0: nothing is sealed).
    public var sealedThrough: Int64
    /// The longest any write transaction of the call held the write lock (appends wait that long at most).
    public var longestWriteSeconds: Double = 0
}

/// Sealing: the oldest rows of `events`, a segment at a time, become per-stream zstd blocks.
///
/// Each segment is built from a read snapshot, beside the writer: its rows are read, their chain re-verified
/// (sealing never hides a damaged row), grouped by stream and compressed with the newest dictionary. Only then
/// does a short write transaction insert the blocks and the segment row, after checking that nobody sealed that
/// range meanwhile. That commit is the move: from then on the rows of the segment's positions are *dead* — reads
/// by position and by stream take positions up to the last segment's from the segments and ignore rows there.
/// Afterwards, `purgeRows` at a time, each in a transaction of its own, a dead row's id goes into its
/// `SealedIDs` bucket and the row is deleted (doing all of it in the segment's transaction held the write lock for
/// 20–36 ms: the keys and the rows' index entries are scattered). Until then a lookup by id finds the dead row's
/// position through the rows' index and reads the event from the segment, so an id is always found (a dead
/// row's own bytes are never read). A crash at any moment leaves, for each position, a live row or a segment, and
/// for each sealed id a dead row or its key; the next `seal` finishes the purge first.
extension EventStore {
    /// Seals every event up to `through` (default: the whole log) that is not sealed yet, in segments of at most
    /// `configuration.segmentEvents` events. `progress` receives (sealed through, target) after each segment;
    /// `continuing` is asked before each one (false: stop there, e.g. at shutdown).
    ///
    /// `lockWait` bounds how long each of its write transactions waits for another process's lock (default: the
    /// store's busy timeout). The background sealer passes a short one: GRDB runs the writer's jobs one at a time,
    /// so an append queued behind a sealing write that waits out the busy timeout would wait up to twice it (found
    /// 2026-11-27: `serve` answered a `POST` 200 after 6 s, with a 5 s timeout, while another process held the lock
    /// 8.5 s). A sealing write that gives up is tried again at the next interval.
    @discardableResult
    public func seal(
        through: Int64? = nil, continuing: () -> Bool = { true }, lockWait: Duration? = nil,
        progress: ((Int64, Int64) -> Void)? = nil
    ) throws -> SealReport {
        if configuration.readOnly { throw StoreError(.readOnly, "the store was opened read-only") }
        var report = SealReport(segments: 0, events: 0, rowPayloadBytes: 0, sealedBytes: 0, sealedThrough: 0)
        let compressor = SegmentCompressor(level: configuration.sealLevel)
        let clock = ContinuousClock()
        func timedWrite<T>(_ body: (Database) throws -> T) throws -> T {
            let started = clock.now
            defer { report.longestWriteSeconds = max(report.longestWriteSeconds, (clock.now - started).seconds) }
            guard let lockWait else { return try pool.write(body) }
            return try pool.writeWithoutTransaction { db in
                sqlite3_busy_timeout(db.sqliteConnection, lockWait.sqliteMilliseconds)
                defer { sqlite3_busy_timeout(db.sqliteConnection, configuration.busyTimeout.sqliteMilliseconds) }
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(db)
                    return .commit
                }
                return result!
            }
        }
        func purge() throws {
            while continuing(), let freed = try timedWrite({ db in try Self.purgeDeadRows(db, limit: Self.purgeRows) }) {
                report.rowPayloadBytes += freed
            }
        }
        do {
            try purge()
            while continuing() {
                guard let built = try pool.read({ db in try buildSegment(db, through: through, compressor: compressor) })
                else { break }
                // false: another sealer wrote this range first; look again.
                guard try timedWrite({ db in try built.write(db, replacingRows: true) }) != nil else { continue }
                // The rows had every hash: a timeline served by this process after sealing needs no decoding.
                segmentHashes.store(built.hashes, of: built.first)
                report.segments += 1
                report.events += built.last - built.first + 1
                report.sealedBytes += built.storedBytes
                report.sealedThrough = built.last
                try purge()
                progress?(built.last, built.target)
            }
            report.sealedThrough = try pool.read { db in try EventReader.sealedThrough(db) }
            return report
        } catch let error as RowDecodingError {
            throw error.storeError
        } catch {
            throw Self.storageError(error, path: path, busyTimeout: lockWait ?? configuration.busyTimeout)
        }
    }

    /// Dead rows purged per write transaction: a few milliseconds of holding the write lock.
    static let purgeRows = 256

    /// Files the ids of up to `limit` dead rows (positions a segment holds) in `SealedIDs`' buckets under the block
    /// that holds each, deletes the rows and takes their payloads off the counters; returns the payload bytes
    /// freed, or nil when there was no dead row.
    static func purgeDeadRows(_ db: Database, limit: Int) throws -> Int64? {
        let sealed = try EventReader.sealedThrough(db)
        let dead = try db.cachedStatement(
            sql: "SELECT position, stream, version, id, length(payload) FROM events WHERE position <= ? ORDER BY position LIMIT ?")
        dead.bind(sealed, at: 1)
        dead.bind(Int64(limit), at: 2)
        var rows: [(position: Int64, stream: Int64, version: Int64, id: String, bytes: Int64)] = []
        do {
            defer { dead.resetBindings() }
            while try dead.stepRow(db) {
                let id = dead.isBlob(at: 3) ? StoredEventID.format(dead.blob(at: 3)) : dead.text(at: 3)
                rows.append((dead.int64(at: 0), dead.int64(at: 1), dead.int64(at: 2), id, dead.int64(at: 4)))
            }
        }
        guard let low = rows.first?.position, let high = rows.last?.position else { return nil }
        let block = try db.cachedStatement(
            sql: "SELECT id FROM segment_blocks WHERE stream = ? AND first_version <= ? ORDER BY first_version DESC LIMIT 1")
        var filed: [(id: String, block: Int64)] = []
        for row in rows {
            block.bind(row.stream, at: 1)
            block.bind(row.version, at: 2)
            defer { block.resetBindings() }
            guard try block.stepRow(db) else {
                throw StoreError(.schema, "position \(row.position) is sealed but no block holds its stream's version")
            }
            filed.append((row.id, block.int64(at: 0)))
        }
        try SealedIDs.file(filed, in: db)
        let freed = rows.reduce(0) { $0 + $1.bytes }
        try db.execute(sql: "DELETE FROM events WHERE position BETWEEN ? AND ?", arguments: [low, high])
        try db.execute(
            sql: "UPDATE store_counters SET value = value - ? WHERE name = 'stored_payload_bytes'", arguments: [freed])
        return freed
    }

    /// The next segment to seal as `db` sees the log, compressed and ready to write; nil when nothing up to
    /// `through` is left unsealed.
    private func buildSegment(_ db: Database, through: Int64?, compressor: SegmentCompressor) throws -> BuiltSegment? {
        let sealed = try EventReader.sealedThrough(db)
        let last = try lastPosition(in: db)
        let target = min(through ?? last, last)
        guard target > sealed else { return nil }
        let first = sealed + 1
        let end = min(target, sealed + Int64(configuration.segmentEvents))
        let events = try reader.fetch(db, sql: EventReader.columns + " WHERE e.position BETWEEN ? AND ? ORDER BY e.position") {
            $0.bind(first, at: 1)
            $0.bind(end, at: 2)
        }
        // The rows must be exactly first…end and match the chain from the last sealed hash.
        let start = try sealed == 0 ? ChainHasher.genesis : segmentLastHash(db, through: sealed)
        var previous = start
        let namespacedFrom = try Self.namespacedFrom(db)
        for (index, event) in events.enumerated() {
            guard event.position == first + Int64(index) else {
                throw StoreError(.corruptPayload, "position \(first + Int64(index)) is missing; run verify before sealing")
            }
            let hash = ChainHasher.finish(ChainHasher.prefix(event, namespacedFrom: namespacedFrom), previous: previous)
            guard hash == event.hash else {
                throw StoreError(.corruptPayload, "position \(event.position) does not match its hash; run verify before sealing")
            }
            previous = hash
        }
        guard events.count == Int(end - first + 1) else {
            throw StoreError(.corruptPayload, "position \(first + Int64(events.count)) is missing; run verify before sealing")
        }
        let dictionary = try compressor.useNewest(db)
        let streamIDs = try Dictionary(
            Row.fetchAll(
                db, sql: "SELECT position, stream FROM events WHERE position BETWEEN ? AND ?", arguments: [first, end]
            ).map { ($0[0] as Int64, $0[1] as Int64) }, uniquingKeysWith: { a, _ in a })
        let streams = try events.map { event in
            guard let stream = streamIDs[event.position] else {
                throw StoreError(.schema, "position \(event.position) vanished while sealing")
            }
            return stream
        }
        return try BuiltSegment(
            events: events, streams: streams, previousHash: start, dictionary: dictionary, compressor: compressor,
            target: target)
    }

    /// The `last_hash` of the segment ending at `through`.
    private func segmentLastHash(_ db: Database, through: Int64) throws -> [UInt8] {
        guard let data = try Data.fetchOne(
            db, sql: "SELECT last_hash FROM segments WHERE last_position = ? ORDER BY first_position DESC LIMIT 1",
            arguments: [through])
        else { throw StoreError(.schema, "no segment ends at position \(through)") }
        return Array(data)
    }
}

/// A zstd context with the dictionary segments are compressed with now.
final class SegmentCompressor {
    private let context = CompressionContext()
    private let level: Int32
    private var dictionaryID: Int64?
    private var dictionary: CompressionDictionary?

    init(level: Int32) {
        self.level = level
        _ = ZSTD_CCtx_setParameter(context.pointer, ZSTD_c_compressionLevel, level)
    }

    /// Switches to the file's newest dictionary (segments are compressed with it) and returns its id (nil: none).
    func useNewest(_ db: Database) throws -> Int64? {
        let newest = try Row.fetchOne(db, sql: "SELECT id, bytes FROM dictionaries ORDER BY id DESC LIMIT 1")
            .map { (id: $0["id"] as Int64, bytes: Array($0["bytes"] as Data)) }
        try use(newest)
        return newest?.id
    }

    private func use(_ newest: (id: Int64, bytes: [UInt8])?) throws {
        guard let newest, newest.id != dictionaryID else { return }
        guard let made = CompressionDictionary(bytes: newest.bytes, level: level) else {
            throw StoreError(.corruptDictionary, "dictionary \(newest.id) could not be loaded for compression")
        }
        if let name = zstdErrorName(ZSTD_CCtx_refCDict(context.pointer, made.pointer)) {
            throw StoreError(.corruptDictionary, "dictionary \(newest.id) refused by zstd: \(name)")
        }
        dictionary = made
        dictionaryID = newest.id
    }

    func compress(_ bytes: [UInt8]) throws -> [UInt8] {
        switch context.compress(bytes) {
        case .success(let frame): return frame
        case .failure(let error): throw StoreError(.compression, "zstd compression failed: \(error.name)")
        }
    }
}

/// A segment compressed from a snapshot, waiting for its write transaction.
struct BuiltSegment {
    struct Block {
        var stream: Int64
        var firstVersion: Int64
        var lastVersion: Int64
        var minAt: Int64
        var data: [UInt8]
    }

    /// Raw bytes past which a stream's events of one segment start another block (a block is decoded whole).
    static let blockBytes = 256 * 1024

    let first: Int64
    let last: Int64
    let target: Int64
    let previousHash: [UInt8]
    let lastHash: [UInt8]
    let checks: [UInt8]
    /// Every event's whole hash, back to back (for `SegmentHashes`; not stored).
    let hashes: [UInt8]
    let dictionary: Int64?
    let blocks: [Block]
    /// The index in `blocks` of each event's block, in position order (filing an id names its block).
    let blockOfEvent: [Int32]

    var storedBytes: Int64 { Int64(checks.count + blocks.reduce(0) { $0 + $1.data.count }) }

    init(
        events: [RecordedEvent], streams: [Int64], previousHash: [UInt8], dictionary: Int64?,
        compressor: SegmentCompressor, target: Int64
    ) throws {
        first = events[0].position
        last = events[events.count - 1].position
        self.target = target
        self.previousHash = previousHash
        lastHash = events[events.count - 1].hash
        checks = events.flatMap { $0.hash.prefix(RawSegment.sealedCheckWidth) }
        hashes = events.flatMap(\.hash)
        self.dictionary = dictionary
        // Group by stream, streams in the order of their first event; within a stream, versions are consecutive.
        // `streams[i]` is the interned stream of `events[i]`; events are kept by index, not copied.
        var order: [Int64] = []
        var byStream: [Int64: [Int]] = [:]
        for (index, stream) in streams.enumerated() {
            if byStream[stream] == nil { order.append(stream) }
            byStream[stream, default: []].append(index)
        }
        var blocks: [Block] = []
        var blockOfEvent = [Int32](repeating: 0, count: events.count)
        var raw: [UInt8] = []
        for stream in order {
            var pending: [Int] = []
            var pendingBytes = 0
            func flush() throws {
                guard !pending.isEmpty else { return }
                raw.removeAll(keepingCapacity: true)
                SegmentBlock.encode(events, pending, segmentStart: events[0].position, into: &raw)
                for index in pending { blockOfEvent[index] = Int32(blocks.count) }
                blocks.append(Block(
                    stream: stream, firstVersion: events[pending[0]].version,
                    lastVersion: events[pending[pending.count - 1]].version,
                    minAt: pending.map { events[$0].at }.min() ?? 0, data: try compressor.compress(raw)))
                pending.removeAll(keepingCapacity: true)
                pendingBytes = 0
            }
            for index in byStream[stream] ?? [] {
                let bytes = events[index].payload.count
                if pendingBytes > 0, pendingBytes + bytes > Self.blockBytes { try flush() }
                pending.append(index)
                pendingBytes += bytes + events[index].id.utf8.count + events[index].type.utf8.count + 16
            }
            try flush()
        }
        self.blocks = blocks
        self.blockOfEvent = blockOfEvent
    }

    /// Writes the segment in the caller's write transaction and returns its first block's id (`blocks[i]` is that
    /// id + i). `replacingRows`: its events are rows, which the commit makes dead (`purgeDeadRows` deletes them);
    /// otherwise they were never rows (`ImportSealer`). nil (writing nothing) when the range is no longer the next
    /// one to seal, or its rows are not all there.
    func write(_ db: Database, replacingRows: Bool) throws -> Int64? {
        guard try EventReader.sealedThrough(db) == first - 1 else { return nil }
        if replacingRows {
            let rows = try Int64.fetchOne(
                db, sql: "SELECT count(*) FROM events WHERE position BETWEEN ? AND ?", arguments: [first, last])
            guard rows == last - first + 1 else { return nil }
        }
        let firstBlock = (try Int64.fetchOne(db, sql: "SELECT max(id) FROM segment_blocks") ?? 0) + 1
        // The blocks' bytes back to back in one blob (003_packed_segments.sql), each block row naming its range.
        let insertBlock = try db.cachedStatement(
            sql: """
                INSERT INTO segment_blocks(id, segment, stream, first_version, last_version, min_at, data, data_offset,
                    data_length)
                VALUES (?, ?, ?, ?, ?, ?, x'', ?, ?)
                """)
        var packed = Data()
        packed.reserveCapacity(blocks.reduce(0) { $0 + $1.data.count })
        for (index, block) in blocks.enumerated() {
            let id = firstBlock + Int64(index)
            try insertBlock.execute(arguments: [
                id, first, block.stream, block.firstVersion, block.lastVersion, block.minAt, packed.count,
                block.data.count,
            ])
            packed.append(contentsOf: block.data)
        }
        try db.execute(sql: "INSERT INTO segment_data(segment, data) VALUES (?, ?)", arguments: [first, packed])
        try db.execute(
            sql: """
                INSERT INTO segments(first_position, last_position, first_block, blocks, dictionary, previous_hash,
                    last_hash, checks)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                first, last, firstBlock, blocks.count, dictionary, Data(previousHash), Data(lastHash), Data(checks),
            ])
        try db.execute(
            sql: "UPDATE store_counters SET value = value + ? WHERE name = 'sealed_bytes'", arguments: [storedBytes])
        return firstBlock
    }
}
