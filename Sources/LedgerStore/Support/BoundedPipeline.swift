import Foundation

/// Items handed from one thread to another in order, with at most `capacity` waiting: the one bounded hand-off
/// behind every pipeline of the ledger (the import's decoding, the scans' readers and decoder, dictionary
/// training).
///
/// Made with a `produce` closure, it runs it on a thread of its own: the work it carries blocks (SQLite reads,
/// reading an input that may be a terminal) or holds a core for a long time, and must not occupy one of the
/// cooperative pool's threads, which are as few as the cores. Made without one, it only hands over between two
/// threads the caller has (a scan's caller feeding its decoding thread).
///
/// The producer calls `send`, which waits while `capacity` items wait, so it is at most `capacity + 1` items
/// ahead of the consumer (the extra one in its hands); memory stays bounded whatever the input's size. The
/// consumer calls `next`, which waits for the next item and returns nil after the last, or throws the
/// producer's error after every item sent before it. Either side may `cancel`: waiting items are dropped, `send`
/// returns false from then on (the producer should return), and `next` returns nil. `stop` also waits until the
/// producer's thread has ended, so nothing it used is still in use.
///
/// Items should be chunks of work (hundreds of events), not single events: each hand-off takes a lock and may
/// wake a thread.
///
/// `@unchecked Sendable`: every mutable field is guarded by `condition`; an item belongs to the producer until
/// `send` and to the consumer after `next`, never to both.
package final class BoundedPipeline<Item>: @unchecked Sendable {
    private let capacity: Int
    private let condition = NSCondition()
    /// Sent and not taken yet, oldest first (at most `capacity`, so removing the first is cheap).
    private var waiting: [Item] = []
    private var closed = false
    private var failure: (any Error)?
    private var cancelled = false
    /// Whether the thread started by `init(name:capacity:produce:)` is still running.
    private var producing = false

    /// A hand-off between threads the caller runs itself.
    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Starts `produce` on a new thread named `name`; it sends its items to `self` and returns when done or when
    /// `send` returns false. Its return closes the pipeline; an error it throws reaches the consumer after the
    /// items it sent.
    package convenience init(
        name: String, capacity: Int, produce: @escaping @Sendable (BoundedPipeline<Item>) throws -> Void
    ) {
        self.init(capacity: capacity)
        producing = true
        let thread = Thread { [self] in
            do {
                try produce(self)
                close()
            } catch {
                close(throwing: error)
            }
            condition.lock()
            producing = false
            condition.broadcast()
            condition.unlock()
        }
        thread.name = name
        thread.start()
    }

    /// Hands `item` over once fewer than `capacity` items wait; false (dropping it) when the pipeline was
    /// cancelled or closed.
    @discardableResult
    package func send(_ item: Item) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while waiting.count >= capacity && !cancelled && !closed { condition.wait() }
        guard !cancelled && !closed else { return false }
        waiting.append(item)
        condition.broadcast()
        return true
    }

    /// No more items: the consumer gets the waiting ones, then nil, or `error` when there is one.
    package func close(throwing error: (any Error)? = nil) {
        condition.lock()
        defer { condition.unlock() }
        guard !closed else { return }
        closed = true
        failure = error
        condition.broadcast()
    }

    /// The next item, waiting for it; nil after the last one or once cancelled. Throws the producer's error
    /// after every item sent before it (and again on every later call).
    package func next() throws -> Item? {
        condition.lock()
        defer { condition.unlock() }
        while waiting.isEmpty && !closed && !cancelled { condition.wait() }
        if cancelled { return nil }
        guard !waiting.isEmpty else {
            if let failure { throw failure }
            return nil
        }
        condition.broadcast()
        return waiting.removeFirst()
    }

    /// Whether `next` would return without waiting.
    package var isReady: Bool {
        condition.lock()
        defer { condition.unlock() }
        return !waiting.isEmpty || closed || cancelled
    }

    /// Drops the waiting items and ends the hand-off for both sides, without waiting for the producer: its
    /// thread ends once its current work returns (even a read that blocks until more input comes).
    package func cancel() {
        condition.lock()
        defer { condition.unlock() }
        cancelled = true
        waiting.removeAll()
        condition.broadcast()
    }

    /// Cancels, then waits until the producer's thread has ended (at once when it had already finished).
    package func stop() {
        cancel()
        condition.lock()
        defer { condition.unlock() }
        while producing { condition.wait() }
    }
}
