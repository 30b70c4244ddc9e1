import ActivityModel
import LedgerStore
import NIOPosix

extension Ledger {
    /// Seals every event not sealed yet into compressed segments (`EventStore.seal`), on ``readThreads``. Appends
    /// (in this process or another) go on between segments; readers are never blocked.
    public func seal(progress: (@Sendable (Int64, Int64) -> Void)? = nil) async throws -> SealReport {
        let store = self.store
        do {
            return try await Self.readThreads.runIfActive { try store.seal(progress: progress) }
        } catch {
            throw Self.storageError(error, path: path, busyTimeout: store.configuration.busyTimeout)
        }
    }
}

extension SealReport {
    /// `seal --json`: `{"segments", "events", "rowPayloadBytes", "sealedBytes", "sealedThrough", "longestWriteMs"}`.
    public var json: JSONValue {
        .object([
            "segments": .int(Int64(segments)), "events": .int(events), "rowPayloadBytes": .int(rowPayloadBytes),
            "sealedBytes": .int(sealedBytes), "sealedThrough": .int(sealedThrough),
            "longestWriteMs": .double((longestWriteSeconds * 10_000).rounded() / 10),
        ])
    }
}
