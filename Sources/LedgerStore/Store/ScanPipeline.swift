import Foundation
import GRDB

/// Runs a long scan on two cores. The calling thread steps SQLite and copies rows out in chunks
/// (`RawEventChunk.read`, it alone may touch the connection); a decoding thread decompresses chunks into
/// events; the calling thread hands the events to `body` in position order. When the decoding thread already
/// has two chunks waiting, the calling thread decodes the next one itself, so both cores stay busy whatever
/// the split of the work between reading, decoding and `body`.
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
        let thread = DecodingThread(transform: transform)
        thread.start()
        defer { thread.stop() }
        var queue: [Slot<T>] = []
        var head = 0
        var ticket: UInt64 = 0
        while true {
            if thread.waiting < 2 {
                ticket += 1
                thread.submit(chunk, ticket: ticket)
                queue.append(.submitted(ticket))
            } else {
                queue.append(.decoded(decode(chunk, decoder, transform)))
            }
            let last = chunk.isLast
            // Hand over whatever is ready at the head; wait for it only at the end or when too much is queued.
            emitting: while head < queue.count {
                let decoded: Decoded<T>
                switch queue[head] {
                case .decoded(let ready):
                    decoded = ready
                case .submitted(let number):
                    guard last || queue.count - head >= 3 || thread.isDone(number) else { break emitting }
                    decoded = thread.take(number)
                case .taken:
                    preconditionFailure("a scan chunk was handed over twice")
                }
                queue[head] = .taken
                head += 1
                guard try emit(decoded, body) else { return }
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
        case submitted(UInt64)
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

/// The scan's second thread: decodes submitted chunks with its own zstd context and runs the transform.
///
/// `@unchecked Sendable`: every mutable field is guarded by `condition`; `decoder` is used by the thread only.
/// `stop()` does not wait: the thread finishes the chunk in hand, drops the rest and ends; chunks own copies
/// of their bytes and dictionaries, so nothing it touches belongs to the caller.
private final class DecodingThread<T: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var inbox: [(ticket: UInt64, chunk: RawEventChunk)] = []
    private var done: [UInt64: ScanPipeline.Decoded<T>] = [:]
    private var submitted = 0
    private var stopping = false
    private let decoder = PayloadDecoder()
    private let transform: @Sendable (RecordedEvent) throws -> T

    init(transform: @escaping @Sendable (RecordedEvent) throws -> T) {
        self.transform = transform
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "ledger-scan-decode"
        thread.start()
    }

    /// Chunks submitted and not taken yet.
    var waiting: Int {
        condition.lock()
        defer { condition.unlock() }
        return submitted
    }

    func submit(_ chunk: RawEventChunk, ticket: UInt64) {
        condition.lock()
        inbox.append((ticket, chunk))
        submitted += 1
        condition.broadcast()
        condition.unlock()
    }

    func isDone(_ ticket: UInt64) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return done[ticket] != nil
    }

    /// The decoded chunk, waiting for it if needed.
    func take(_ ticket: UInt64) -> ScanPipeline.Decoded<T> {
        condition.lock()
        defer { condition.unlock() }
        while done[ticket] == nil { condition.wait() }
        submitted -= 1
        return done.removeValue(forKey: ticket)!
    }

    func stop() {
        condition.lock()
        stopping = true
        inbox.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while inbox.isEmpty && !stopping { condition.wait() }
            if stopping {
                condition.unlock()
                return
            }
            let next = inbox.removeFirst()
            condition.unlock()
            let decoded = ScanPipeline.decode(next.chunk, decoder, transform)
            condition.lock()
            done[next.ticket] = decoded
            condition.broadcast()
            condition.unlock()
        }
    }
}
