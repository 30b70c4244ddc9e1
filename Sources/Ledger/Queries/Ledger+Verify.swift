import ActivityModel
import LedgerPostgres
import LedgerStore

extension Ledger {
    /// Recomputes the hash chain (SPEC §6) and names the first bad position; with `digest`, also proves the log
    /// up to that digest unchanged. `progress` receives (rows checked, rows to check) now and then.
    public func verify(
        upTo digest: Digest? = nil, progress: (@Sendable (Int64, Int64) -> Void)? = nil
    ) async throws -> VerifyReport {
        try await read { db in try db.verify(upTo: digest, progress: progress) }
    }

    /// The chain head: the last position and its hash.
    public func digest() async throws -> Digest {
        try await read { db in try db.digest() }
    }

    /// The highest position written (0 when empty).
    ///
    /// One indexed read (`max(position)`), done on the caller's thread: the hop to a reader queue and back costs
    /// more than the read (measured: `/health`, which asks this on every request, served 25–40 % fewer requests
    /// per second through ``read(_:)``; BENCHMARKS.md). A WAL reader never waits for a writer, so this does not
    /// block beyond the read itself.
    public func lastPosition() async throws -> Int64 {
        switch storage {
        case .file(let store):
            do {
                return try store.lastPosition()
            } catch {
                throw Self.storageError(error, path: path, busyTimeout: store.configuration.busyTimeout)
            }
        case .postgres(let postgres):
            do {
                return try await postgres.log.lastPosition()
            } catch {
                throw Self.storageError(error, path: path)
            }
        }
    }
}

extension VerifyReport {
    /// `verify --json` and `GET /v1/verify`: `{"ok", "checked", "firstBadPosition", "reason", "message",
    /// "digest"}`; `message` repeats `reason` under the name the HTTP API first published.
    public var json: JSONValue {
        let reason: JSONValue = reason.map(JSONValue.string) ?? .null
        return .object([
            "ok": .bool(ok), "checked": .int(checked),
            "firstBadPosition": firstBadPosition.map { .int($0) } ?? .null,
            "reason": reason, "message": reason, "digest": .string(lastGood.description),
        ])
    }
}

extension Digest {
    /// `digest --json` and `GET /v1/digest`: `{"position", "hash", "digest"}` (`digest` is `POSITION:HEX`, what
    /// `verify --digest` takes).
    public var json: JSONValue {
        .object(["position": .int(position), "hash": .string(hex), "digest": .string(description)])
    }
}
