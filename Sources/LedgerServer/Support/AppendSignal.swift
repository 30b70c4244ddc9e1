/// Wakes feed long-polls when this process appends, instead of having them poll the ledger tightly.
actor AppendSignal {
    private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextID = 0

    /// Wakes every waiter.
    func signal() {
        for waiter in waiters.values { waiter.resume() }
        waiters.removeAll()
    }

    /// Returns at the next signal or after `timeout`, whichever comes first.
    nonisolated func wait(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: timeout) }
            group.addTask { await self.waitForSignal() }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForSignal() async {
        let id = nextID
        nextID += 1
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume()
                } else {
                    waiters[id] = continuation
                }
            }
        } onCancel: {
            Task { await self.cancel(id) }
        }
    }

    private func cancel(_ id: Int) {
        waiters.removeValue(forKey: id)?.resume()
    }
}
