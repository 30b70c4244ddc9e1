import Foundation
import GRDB

/// A scan over sealed segments, in position order: the sealed counterpart of `ParallelScan`.
///
/// Segments never change once committed (sealing only adds segments, in one transaction with deleting their
/// rows), so any later snapshot holds the same bytes for a segment the caller's snapshot sees. Reader threads
/// (`readerThreads`), each with a read-only connection of its own, take turns at segments: read, decompress, hash
/// (each segment's chain starts from its stored `previous_hash`, so segments hash independently) and
/// transform them; the caller's thread takes them in order. The first `leadingSegments` are decoded on the
/// caller's thread, so a short read (a feed page) never starts the readers; a reader that fails leaves its
/// segments to the caller's connection, which also gives the right error.
enum SealedScan {
    static let leadingSegments = 1
    static let minimumReaderSegments = 2
    /// Three, measured on 2 cores: with two, a core sat idle whenever both readers waited for the caller to take
    /// a segment, or one waited for its turn; a sealed rebuild of 1M events took 0.95× the wall time with three
    /// (26 alternating whole-process pairs, BENCHMARKS.md session 20), for ~8 MiB more at its peak. A scan with
    /// fewer segments left than that starts one reader per segment.
    static let readerThreads = 3

    /// One decoded segment: its events (with chain hashes) and their transforms, in order. Two arrays, not one
    /// of pairs: copying pairs out of an array retained every event's four references (a third of a scan).
    struct Chunk<T> {
        var first: Int64
        var last: Int64
        var previousHash: [UInt8]
        var events: [RecordedEvent]
        /// `transform` of `events[i]`; shorter than `events` when it threw (`error`).
        var values: [T]
        /// The segment does not decode (`RowDecodingError` at its first position), or `transform` threw after
        /// `values`.
        var error: (any Error)?
        /// The first position whose hash differs from its stored check value.
        var mismatch: Int64?
    }

    /// First positions of the segments holding positions after `after`, in order.
    static func segments(_ db: Database, after: Int64) throws -> [Int64] {
        try Int64.fetchAll(
            db,
            sql: """
                SELECT first_position FROM segments
                WHERE first_position >= coalesce(
                    (SELECT first_position FROM segments WHERE first_position <= ? ORDER BY first_position DESC LIMIT 1), 0)
                ORDER BY first_position
                """, arguments: [after + 1])
    }

    /// Calls `body` with each segment holding positions after `after`, in order, until it returns false
    /// (then returns false). Without `hashes`, events come with an empty hash and no check is made (`mismatch`
    /// stays nil): hashing was about a fifth of a scan.
    static func run<T: Sendable>(
        path: String, db: Database, after: Int64, decoders: DecoderPool, hashes: Bool = true,
        transform: @escaping @Sendable (RecordedEvent) throws -> T, _ body: (Chunk<T>) throws -> Bool
    ) throws -> Bool {
        try run(path: path, db: db, after: after, decoders: decoders, decode: { raw, decoder in
            decode(raw, decoder, hashes: hashes, transform)
        }, body)
    }

    /// Like `run`, with each event lent as a view (`RawSegment.lend`: no event is built) to a transform made for
    /// the segment (`makeTransform`, on the thread that decodes it); a chunk's `events` stay empty and its one value
    /// holds the segment's values by slot (none when `error` is set).
    static func lending<T: Sendable>(
        path: String, db: Database, after: Int64, decoders: DecoderPool,
        makeTransform: @escaping @Sendable () -> (EventView) -> T, _ body: (Chunk<SlotBuffer<T>>) throws -> Bool
    ) throws -> Bool {
        try run(path: path, db: db, after: after, decoders: decoders, decode: { raw, decoder in
            var chunk = Chunk<SlotBuffer<T>>(
                first: raw.first, last: raw.last, previousHash: raw.previousHash, events: [], values: [])
            switch raw.lend(with: decoder, makeTransform()) {
            case .success(let slots): chunk.values = [slots]
            case .failure(let error): chunk.error = error
            }
            return chunk
        }, body)
    }

    /// The scan itself: `decode` makes each segment's chunk, on a reader's thread or this one.
    private static func run<T: Sendable>(
        path: String, db: Database, after: Int64, decoders: DecoderPool,
        decode: @escaping @Sendable (RawSegment, PayloadDecoder) -> Chunk<T>, _ body: (Chunk<T>) throws -> Bool
    ) throws -> Bool {
        let firsts = try segments(db, after: after)
        let namespacedFrom = try EventStore.namespacedFrom(db)
        var readers: [BoundedPipeline<Chunk<T>?>] = []
        defer { for reader in readers { reader.stop() } }
        for (index, first) in firsts.enumerated() {
            if index == leadingSegments && firsts.count - index >= minimumReaderSegments {
                // Each reader may be three segments ahead of the caller: with one, a reader that finished early
                // waited for the other's slower segment to be taken first (a sealed rebuild kept the 2 cores 82 %
                // busy under `perf`, 87 % with three; 16 alternating whole-process pairs, wall 0.95×).
                let threads = min(Self.readerThreads, firsts.count - index)
                readers = (0..<threads).map { reader in
                    let mine = stride(from: index + reader, to: firsts.count, by: threads).map { firsts[$0] }
                    return BoundedPipeline(name: "ledger-seal-read", capacity: 3) { pipeline in
                        read(mine, path: path, namespacedFrom: namespacedFrom, decoders: decoders, decode: decode,
                            into: pipeline)
                    }
                }
            }
            let sent = readers.isEmpty ? nil : (try? readers[(index - leadingSegments) % readers.count].next()) ?? nil
            let chunk: Chunk<T>
            if let ready = sent {
                chunk = ready
            } else {
                var names: [Int64: String] = [:]
                chunk = try decoders.withHandle { decoder in
                    guard
                        let raw = try RawSegment.read(
                            first: first, db: db, names: &names, loader: decoder, namespacedFrom: namespacedFrom)
                    else { throw StoreError(.schema, "segment \(first) vanished during a scan") }
                    return decode(raw, decoder)
                }
            }
            guard try body(chunk) else { return false }
        }
        return true
    }

    /// Decodes `raw` and transforms its events.
    static func decode<T>(
        _ raw: RawSegment, _ decoder: PayloadDecoder, hashes: Bool, _ transform: (RecordedEvent) throws -> T
    ) -> Chunk<T> {
        let decoded = raw.decode(with: decoder, hashes: hashes)
        var chunk = Chunk<T>(
            first: raw.first, last: raw.last, previousHash: raw.previousHash, events: decoded.events, values: [],
            error: decoded.error, mismatch: decoded.mismatch)
        // Through the buffer, each event is lent to `transform` without a copy (an array element would be copied:
        // four retains and releases per event).
        var values: [T] = []
        values.reserveCapacity(chunk.events.count)
        chunk.events.withUnsafeBufferPointer { events in
            for index in events.indices {
                do {
                    values.append(try transform(events[index]))
                } catch {
                    chunk.error = error
                    break
                }
            }
        }
        chunk.values = values
        return chunk
    }

    /// A reader's thread: sends each of `firsts` decoded, or nil for one it could not read (then stops).
    private static func read<T>(
        _ firsts: [Int64], path: String, namespacedFrom: Int64, decoders: DecoderPool,
        decode: (RawSegment, PayloadDecoder) -> Chunk<T>, into pipeline: BoundedPipeline<Chunk<T>?>
    ) {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "LedgerStore.sealed-scan"
        guard let queue = try? DatabaseQueue(path: path, configuration: configuration) else { return }
        try? queue.read { db in
            var names: [Int64: String] = [:]
            decoders.withHandle { decoder in
                for first in firsts {
                    guard
                        let raw = try? RawSegment.read(
                            first: first, db: db, names: &names, loader: decoder, namespacedFrom: namespacedFrom)
                    else {
                        _ = pipeline.send(nil)
                        return
                    }
                    guard pipeline.send(decode(raw, decoder)) else { return }
                }
            }
        }
    }
}
