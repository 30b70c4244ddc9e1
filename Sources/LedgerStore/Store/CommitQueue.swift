import Synchronization

/// The waiting room of group commit. Appenders queue their batches; one of them at a time is the leader,
/// which takes everything queued, commits it in one transaction and hands the lead to the next waiter.
///
/// No background task: the writer "starts" when an append finds nobody leading, and stops when the queue
/// is empty, so `append` works with or without a `ServiceGroup`.
final class CommitQueue: Sendable {
    enum Signal: Sendable {
        /// You lead now: take the queue and commit it.
        case lead
        /// Your batch was committed (or failed) by a leader.
        case done(Result<AppendResult, any Error>)
    }

    struct Entry: Sendable {
        let token: UInt64
        let batch: AppendBatch
        let continuation: CheckedContinuation<Signal, Never>
    }

    private struct State {
        var entries: [Entry] = []
        var head = 0
        var leading = false
        /// Set by `closeAndWait`: later batches are refused, under the same lock that queues them.
        var closed = false
        var nextToken: UInt64 = 0
        var drained: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func makeToken() -> UInt64 {
        state.withLock { state in
            state.nextToken += 1
            return state.nextToken
        }
    }

    /// Queues a batch; resumes `continuation` with `.lead` at once when nobody leads, or with `refusal` when the
    /// queue is closed (checked and queued under one lock, so no batch slips in after `closeAndWait` returned).
    func enqueue(_ entry: Entry, refusal: @autoclosure () -> any Error) {
        enum Outcome { case queued, lead, refused }
        let outcome: Outcome = state.withLock { state in
            if state.closed { return .refused }
            state.entries.append(entry)
            if state.leading { return .queued }
            state.leading = true
            return .lead
        }
        switch outcome {
        case .queued: break
        case .lead: entry.continuation.resume(returning: .lead)
        case .refused: entry.continuation.resume(returning: .done(.failure(refusal())))
        }
    }

    /// Takes queued entries from the head, up to `maximumEvents` (always at least the head).
    func takeGroup(maximumEvents: Int) -> [Entry] {
        state.withLock { state in
            var group: [Entry] = []
            var events = 0
            while state.head < state.entries.count {
                let entry = state.entries[state.head]
                if !group.isEmpty && events + entry.batch.events.count > maximumEvents { break }
                group.append(entry)
                events += entry.batch.events.count
                state.head += 1
            }
            if state.head == state.entries.count {
                state.entries.removeAll(keepingCapacity: true)
                state.head = 0
            }
            return group
        }
    }

    /// Passes the lead to the oldest waiter, or stops leading when nobody waits.
    func handOver() {
        let (next, drained): (Entry?, [CheckedContinuation<Void, Never>]) = state.withLock { state in
            if state.head < state.entries.count { return (state.entries[state.head], []) }
            state.leading = false
            let drained = state.drained
            state.drained = []
            return (nil, drained)
        }
        next?.continuation.resume(returning: .lead)
        for waiter in drained { waiter.resume() }
    }

    /// Refuses every later batch and returns once nothing queued before is left uncommitted.
    func closeAndWait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state in
                state.closed = true
                if !state.leading { return true }
                state.drained.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}
