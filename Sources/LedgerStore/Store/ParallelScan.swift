import Foundation
import GRDB

/// A long scan read by two threads with connections of their own, while the caller's thread only hands events
/// to `body`.
///
/// `ScanPipeline` leaves the SQLite stepping on the caller's thread (only it may use the caller's connection),
/// so that thread did about 60 % of a plain scan's work and capped it. Here positions are gapless, so the range
/// splits into blocks of `blockRows` positions: reader *i* takes blocks *i*, *i* + 2, … on its own read-only
/// connection, copies, decompresses and transforms them; the caller's thread takes the blocks in order.
///
/// Rows up to the last position the caller's connection sees never change (the log only grows), so another
/// connection reads the same bytes for them. Another connection cannot see what the caller's transaction wrote
/// and has not committed, though: a block that comes back short (a row missing or unreadable there) is read
/// again on the caller's connection, which also gives the right error for a real gap or a damaged row.
enum ParallelScan {
    static let blockRows: Int64 = 512
    /// Blocks read on the caller's connection before the readers start: a scan stopped early (a feed page) never
    /// pays for their threads and connections.
    static let leadingBlocks = 4
    /// Fewer blocks than this after the leading ones are not worth two more connections.
    static let minimumReaderBlocks = 8
    /// Whether a scan of `events` rows is long enough for the readers (else `ScanPipeline` serves it).
    static func worthReaders(events: Int64) -> Bool {
        events >= Int64(leadingBlocks + minimumReaderBlocks) * blockRows
    }

    /// Blocks a reader may have decoded ahead of the caller.
    static let readAhead = 2

    /// Calls `body` with every event after `after` up to `last`, in order, until it returns false; throws a row's
    /// `RowDecodingError` (or `transform`'s error) after `body` saw every event before it.
    static func run<T: Sendable>(
        path: String, db: Database, after: Int64, last: Int64, decoders: DecoderPool,
        transform: @escaping @Sendable (RecordedEvent) throws -> T, _ body: (RecordedEvent, T) throws -> Bool
    ) throws {
        let blocks = Int((last - after + blockRows - 1) / blockRows)
        var readers: [BlockReader<T>] = []
        defer { for reader in readers { reader.stop() } }
        for block in 0..<blocks {
            if block == leadingBlocks && blocks - block >= minimumReaderBlocks {
                readers = (0..<2).map { index in
                    BlockReader<T>(path: path, blocks: Array(stride(from: block + index, to: blocks, by: 2)),
                        after: after, last: last, decoders: decoders, transform: transform)
                }
                for reader in readers { reader.start() }
            }
            let decoded: ScanPipeline.Decoded<T>
            if !readers.isEmpty, let ready = readers[(block - leadingBlocks) % 2].take(block) {
                decoded = ready
            } else {
                decoded = try readHere(block: block, db: db, after: after, last: last, decoders: decoders, transform)
            }
            for (event, value) in decoded.items {
                guard try body(event, value) else { return }
            }
            if let error = decoded.error { throw error }
        }
    }

    /// Positions of `block`: after `lower`, up to and including `upper`.
    static func bounds(of block: Int, after: Int64, last: Int64) -> (lower: Int64, upper: Int64) {
        let lower = after + Int64(block) * blockRows
        return (lower, min(last, lower + blockRows))
    }

    static let blockSQL = EventReader.columns + " WHERE e.position > ? AND e.position <= ? ORDER BY e.position"

    /// A block read on the caller's connection (a reader found it short).
    private static func readHere<T>(
        block: Int, db: Database, after: Int64, last: Int64, decoders: DecoderPool,
        _ transform: (RecordedEvent) throws -> T
    ) throws -> ScanPipeline.Decoded<T> {
        let (lower, upper) = bounds(of: block, after: after, last: last)
        let statement = try db.cachedStatement(sql: blockSQL)
        statement.bind(lower, at: 1)
        statement.bind(upper, at: 2)
        defer { statement.resetBindings() }
        var names: [Int64: String] = [:]
        return try decoders.withHandle { decoder in
            let chunk = try RawEventChunk.read(
                statement, db: db, capacity: Int(upper - lower), names: &names, loader: decoder)
            return ScanPipeline.decode(chunk, decoder, transform)
        }
    }
}

/// One of the scan's two readers: its own read-only connection, its blocks, a few decoded ahead.
///
/// `@unchecked Sendable`: mutable state is guarded by `condition`; the connection and decoder are used by the
/// thread only.
private final class BlockReader<T: Sendable>: @unchecked Sendable {
    private enum Outcome {
        case decoded(ScanPipeline.Decoded<T>)
        /// Fewer rows than positions on this connection: the caller reads the block itself.
        case short
    }

    private let path: String
    /// This reader's blocks, in order.
    private let mine: [Int]
    private let after: Int64
    private let last: Int64
    private let decoders: DecoderPool
    private let transform: @Sendable (RecordedEvent) throws -> T
    private let condition = NSCondition()
    private var done: [Int: Outcome] = [:]
    private var taken = 0
    private var stopping = false
    private var finished = false

    init(
        path: String, blocks: [Int], after: Int64, last: Int64, decoders: DecoderPool,
        transform: @escaping @Sendable (RecordedEvent) throws -> T
    ) {
        self.path = path
        self.mine = blocks
        self.after = after
        self.last = last
        self.decoders = decoders
        self.transform = transform
    }

    func start() {
        let thread = Thread { [self] in
            run()
            condition.lock()
            finished = true
            condition.broadcast()
            condition.unlock()
        }
        thread.name = "ledger-scan-read"
        thread.start()
    }

    /// Block `block` decoded, waiting for it; nil when the caller must read it itself.
    func take(_ block: Int) -> ScanPipeline.Decoded<T>? {
        condition.lock()
        defer { condition.unlock() }
        while done[block] == nil && !finished { condition.wait() }
        taken += 1
        condition.broadcast()
        guard case .decoded(let decoded)? = done.removeValue(forKey: block) else { return nil }
        return decoded
    }

    /// Stops reading and waits until the thread has let go of its connection.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !finished { condition.wait() }
        done.removeAll()
        condition.unlock()
    }

    private func run() {
        // Any failure to open or read here leaves the remaining blocks to the caller's connection.
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "LedgerStore.scan"
        guard let queue = try? DatabaseQueue(path: path, configuration: configuration) else { return }
        try? queue.read { db in
            let statement = try db.makeStatement(sql: ParallelScan.blockSQL)
            var names: [Int64: String] = [:]
            decoders.withHandle { decoder in
                for (index, block) in mine.enumerated() {
                    guard waitForRoom(index) else { return }
                    let (lower, upper) = ParallelScan.bounds(of: block, after: after, last: last)
                    statement.bind(lower, at: 1)
                    statement.bind(upper, at: 2)
                    let outcome: Outcome
                    if let chunk = try? RawEventChunk.read(
                        statement, db: db, capacity: Int(upper - lower), names: &names, loader: decoder),
                        chunk.count == Int(upper - lower)
                    {
                        outcome = .decoded(ScanPipeline.decode(chunk, decoder, transform))
                    } else {
                        outcome = .short
                    }
                    statement.resetBindings()
                    condition.lock()
                    done[block] = outcome
                    condition.broadcast()
                    condition.unlock()
                }
            }
        }
    }

    /// Waits until the caller has taken all but `readAhead` of this reader's earlier blocks; false to stop.
    private func waitForRoom(_ index: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !stopping && index - taken >= ParallelScan.readAhead { condition.wait() }
        return !stopping
    }
}
