import ActivityModel
import LedgerStore
import NIOPosix

extension Ledger {
    /// Seals every event not sealed yet into compressed segments (`EventStore.seal`), on ``readThreads``. Appends
    /// (in this process or another) go on between segments; readers are never blocked.
    public func seal(progress: (@Sendable (Int64, Int64) -> Void)? = nil) async throws -> SealReport {
        guard let store = file else { throw Self.fileOnly("sealing", why: "PostgreSQL keeps a row per event and compresses large payloads itself (TOAST)") }
        do {
            return try await Self.readThreads.runIfActive { try store.seal(progress: progress) }
        } catch {
            throw Self.storageError(error, path: path, busyTimeout: store.configuration.busyTimeout)
        }
    }

    /// The refusal of a feature of the SQLite file on a ledger on PostgreSQL, saying why (bad input naming `db`).
    public static func fileOnly(_ feature: String, why: String) -> LedgerError {
        LedgerError(.badInput, "--db: \(feature) is a feature of the ledger file: \(why)", field: "db")
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
