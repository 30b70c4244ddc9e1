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

    /// Blocks a reader may have decoded ahead of the caller (one waiting, one in its hands).
    static let readAhead = 2

    /// Calls `body` with every event after `after` up to `last`, in order, until it returns false; throws a row's
    /// `RowDecodingError` (or `transform`'s error) after `body` saw every event before it.
    static func run<T: Sendable>(
        path: String, db: Database, after: Int64, last: Int64, decoders: DecoderPool,
        transform: @escaping @Sendable (RecordedEvent) throws -> T, _ body: (RecordedEvent, T) throws -> Bool
    ) throws {
        let blocks = Int((last - after + blockRows - 1) / blockRows)
        var readers: [BoundedPipeline<BlockOutcome<T>>] = []
        // Joined, not only cancelled: a reader lets go of its connection before the caller's transaction ends.
        defer { for reader in readers { reader.stop() } }
        for block in 0..<blocks {
            if block == leadingBlocks && blocks - block >= minimumReaderBlocks {
                readers = (0..<2).map { index in
                    let mine = Array(stride(from: block + index, to: blocks, by: 2))
                    return BoundedPipeline(name: "ledger-scan-read", capacity: readAhead - 1) { pipeline in
                        read(blocks: mine, path: path, after: after, last: last, decoders: decoders,
                            transform: transform, into: pipeline)
                    }
                }
            }
            // A reader that ended early (it could not open or read) leaves its remaining blocks to this connection;
            // readers never throw.
            let sent = readers.isEmpty ? nil : (try? readers[(block - leadingBlocks) % 2].next()) ?? nil
            let decoded: ScanPipeline.Decoded<T>
            if case .decoded(let ready)? = sent {
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

    /// A reader's thread: reads, decompresses and transforms `blocks` on a read-only connection of its own, and
    /// sends them in order. Any failure to open or read ends it, which leaves the remaining blocks to the
    /// caller's connection.
    private static func read<T>(
        blocks: [Int], path: String, after: Int64, last: Int64, decoders: DecoderPool,
        transform: (RecordedEvent) throws -> T, into pipeline: BoundedPipeline<BlockOutcome<T>>
    ) {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "LedgerStore.scan"
        guard let queue = try? DatabaseQueue(path: path, configuration: configuration) else { return }
        try? queue.read { db in
            let statement = try db.makeStatement(sql: blockSQL)
            var names: [Int64: String] = [:]
            decoders.withHandle { decoder in
                for block in blocks {
                    let (lower, upper) = bounds(of: block, after: after, last: last)
                    statement.bind(lower, at: 1)
                    statement.bind(upper, at: 2)
                    let outcome: BlockOutcome<T>
                    if let chunk = try? RawEventChunk.read(
                        statement, db: db, capacity: Int(upper - lower), names: &names, loader: decoder),
                        chunk.count == Int(upper - lower)
                    {
                        outcome = .decoded(ScanPipeline.decode(chunk, decoder, transform))
                    } else {
                        outcome = .short
                    }
                    statement.resetBindings()
                    guard pipeline.send(outcome) else { return }
                }
            }
        }
    }
}

/// What a reader sends for one of its blocks.
private enum BlockOutcome<T> {
    case decoded(ScanPipeline.Decoded<T>)
    /// Fewer rows than positions on the reader's connection: the caller reads the block itself.
    case short
}
