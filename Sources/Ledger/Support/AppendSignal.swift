import Synchronization

/// Wakes feed long-polls when the ledger grows (`Ledger.waitForAppend(timeout:)`), instead of having them poll the
/// ledger tightly: a ledger in a file signals its own appends; a ledger on PostgreSQL signals every process's,
/// from one LISTEN connection (`PostgresLedger.follow`).
///
/// A lock rather than an actor: every acknowledged append signals, and with no long-poll waiting that must
/// cost a lock, not a hop to an actor and back.
package final class AppendSignal: Sendable {
    private struct State {
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    /// Wakes every waiter.
    package init() {}

    package func signal() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.waiters.isEmpty else { return [] }
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns at the next signal or after `timeout`, whichever comes first.
    package func wait(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: timeout) }
            group.addTask { await self.waitForSignal() }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForSignal() async {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // Checked under the lock: a cancellation that ran before we registered found nothing to resume.
                let resumeNow = state.withLock { state in
                    if Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            cancel(id)
        }
    }

    private func cancel(_ id: Int) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
    }
}
