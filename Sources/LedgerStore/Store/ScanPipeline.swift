import Foundation
import GRDB

/// Runs a long scan on two cores. The calling thread steps SQLite and copies rows out in chunks
/// (`RawEventChunk.read`, it alone may touch the connection); a decoding thread decompresses chunks into
/// events (two `BoundedPipeline`s: chunks to it, decoded chunks back); the calling thread hands the events to
/// `body` in position order. When the decoding thread already has two chunks waiting, the calling thread decodes
/// the next one itself, so both cores stay busy whatever the split of the work between reading, decoding and
/// `body`.
///
/// A scan that fits in one chunk never starts the thread. At most a few chunks are in flight, so memory stays
/// bounded whatever the log's size.
enum ScanPipeline {
    static let chunkRows = 512

    /// Calls `body` with every event `statement` (bound, selecting `EventReader.columns`) yields, in order,
    /// until it returns false. A row that cannot be decoded throws its `RowDecodingError` after `body` saw
    /// every row before it.
    static func run(
        _ statement: Statement, db: Database, decoder: PayloadDecoder, _ body: (RecordedEvent) throws -> Bool
    ) throws {
        try run(statement, db: db, decoder: decoder, transform: { _ in () }) { event, _ in try body(event) }
    }

    /// Like `run(_:db:decoder:_:)`, also running `transform` on each event on the decoding side (either thread),
    /// so that pure per-event work (a payload's JSON) overlaps the reading too. An error of `transform` is thrown
    /// in order, like a row's, after `body` saw every event before it.
    static func run<T: Sendable>(
        _ statement: Statement, db: Database, decoder: PayloadDecoder,
        transform: @escaping @Sendable (RecordedEvent) throws -> T, _ body: (RecordedEvent, T) throws -> Bool
    ) throws {
        var names: [Int64: String] = [:]
        var chunk = try RawEventChunk.read(statement, db: db, capacity: chunkRows, names: &names, loader: decoder)
        if chunk.isLast {
            _ = try emit(decode(chunk, decoder, transform), body)
            return
        }
        // The caller feeds `chunks` and takes `decoded`; the decoding thread sits between them, with its own zstd
        // context. Each holds at most two chunks, as `inFlight` never exceeds two.
        let chunks = BoundedPipeline<RawEventChunk>(capacity: 2)
        let decoded = BoundedPipeline<Decoded<T>>(name: "ledger-scan-decode", capacity: 2) { decoded in
            let decoder = PayloadDecoder()
            while let chunk = try chunks.next() {
                guard decoded.send(decode(chunk, decoder, transform)) else { return }
            }
        }
        defer {
            chunks.cancel()
            decoded.stop()
        }
        var queue: [Slot<T>] = []
        var head = 0
        /// Chunks sent to the decoding thread and not taken back yet.
        var inFlight = 0
        while true {
            if inFlight < 2 {
                chunks.send(chunk)
                inFlight += 1
                queue.append(.submitted)
            } else {
                queue.append(.decoded(decode(chunk, decoder, transform)))
            }
            let last = chunk.isLast
            // Hand over whatever is ready at the head; wait for it only at the end or when too much is queued.
            emitting: while head < queue.count {
                let ready: Decoded<T>
                switch queue[head] {
                case .decoded(let done):
                    ready = done
                case .submitted:
                    guard last || queue.count - head >= 3 || decoded.isReady else { break emitting }
                    // The decoding thread sends one result per chunk, in order, until cancelled below.
                    guard let done = try decoded.next() else { preconditionFailure("the scan's decoder stopped") }
                    inFlight -= 1
                    ready = done
                case .taken:
                    preconditionFailure("a scan chunk was handed over twice")
                }
                queue[head] = .taken
                head += 1
                guard try emit(ready, body) else { return }
            }
            if last { return }
            if head > 64 {
                queue.removeFirst(head)
                head = 0
            }
            chunk = try RawEventChunk.read(statement, db: db, capacity: chunkRows, names: &names, loader: decoder)
        }
    }

    /// A chunk's events with their transforms, in order, up to the first failure (thrown after them).
    static func decode<T>(
        _ chunk: RawEventChunk, _ decoder: PayloadDecoder, _ transform: (RecordedEvent) throws -> T
    ) -> Decoded<T> {
        let (events, rowError) = chunk.decode(with: decoder)
        var items: [(RecordedEvent, T)] = []
        items.reserveCapacity(events.count)
        for event in events {
            do {
                items.append((event, try transform(event)))
            } catch {
                return (items, error)
            }
        }
        return (items, rowError)
    }

    typealias Decoded<T> = (items: [(RecordedEvent, T)], error: (any Error)?)

    private enum Slot<T> {
        case decoded(Decoded<T>)
        /// Sent to the decoding thread, whose results come back in the order sent.
        case submitted
        case taken
    }

    /// Calls `body` for each event; false when it asked to stop. Throws the chunk's error after them.
    private static func emit<T>(_ decoded: Decoded<T>, _ body: (RecordedEvent, T) throws -> Bool) throws -> Bool {
        let (items, error) = decoded
        for (event, value) in items {
            guard try body(event, value) else { return false }
        }
        if let error { throw error }
        return true
    }
}
