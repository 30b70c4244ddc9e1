import ActivityModel
import Foundation
import GRDB
import LedgerPostgres
import LedgerStore
import Logging

/// Where a replay stops: an event time (every event with `at` ≤ T) or a position of the log (what the ledger knew).
public enum ReplayLimit: Sendable, Hashable {
    case until(Instant)
    case position(Int64)
}

/// What a replay wrote.
public struct ReplaySummary: Sendable, Hashable, Codable {
    public var path: String
    public var events: Int64
    public var lastPosition: Int64
}

extension Ledger {
    /// Writes a new ledger file at `path` holding the events up to `limit`, in their original order, with their ids,
    /// times and payloads (each in its app's namespace), and its projections built as it goes. The file must not exist.
    ///
    /// The log is verified first, and a log whose chain does not hold is refused, naming the first bad position: the
    /// copy gets a chain of its own, so replaying a tampered log gave a file that verified (found by a probe; `backup`
    /// and `seal` refused the same file). The file is written under a temporary name and published whole
    /// (`PartialFile`): a failure leaves nothing at `path`, and a file someone else made there meanwhile is kept.
    public func replay(
        _ limit: ReplayLimit, into path: String, progress: ((Int64, Int64) -> Void)? = nil
    ) async throws -> ReplaySummary {
        if FileManager.default.fileExists(atPath: path) {
            throw LedgerError(.badInput, "\(path) already exists: replay writes a new ledger file", field: "into")
        }
        let verified = try await verify()
        guard verified.ok else {
            let position = verified.firstBadPosition.map { " at position \($0)" } ?? ""
            throw LedgerError(
                .badInput,
                "the ledger does not verify\(position) (\(verified.reason ?? "chain broken")): replay copies only a log "
                    + "whose chain holds; run verify", field: "db")
        }
        let file = PartialFile(destination: path)
        defer { file.remove() }
        let target: Ledger
        do {
            target = try Ledger(path: file.path, logger: logger)
        } catch {
            throw PartialFile.WriteError(
                destination: path, message: (error as? LedgerError)?.message ?? "\(error)", exists: false)
        }
        var summary: ReplaySummary
        do {
            if let postgres {
                summary = try await replay(from: postgres, limit, into: target, progress: progress)
            } else {
                summary = try await replayFile(limit, into: target, progress: progress)
            }
        } catch {
            await target.close()
            // A full disk or an unwritable file is the new file's failure, named by its destination (the source
            // is open and read already; it was reported as the source's).
            var cause: any Error = error
            while let wrapped = (cause as? LedgerError)?.cause { cause = wrapped }
            throw PartialFile.WriteError(cause, destination: path) ?? error
        }
        await target.close()
        try file.publish()
        summary.path = path
        return summary
    }

    /// The replay of this ledger file into `target`, in one transaction.
    private func replayFile(
        _ limit: ReplayLimit, into target: Ledger, progress: ((Int64, Int64) -> Void)?
    ) async throws -> ReplaySummary {
        let last = try store.lastPosition()
        let written: Int64 = try await target.store.importTransaction { session in
            var batch: [NewEvent] = []
            var count: Int64 = 0
            func flush() throws {
                guard !batch.isEmpty else { return }
                _ = try session.append(AppendBatch(events: batch))
                batch.removeAll(keepingCapacity: true)
                progress?(count, last)
            }
            try store.forEachEvent(after: 0, hashes: false) { event in
                switch limit {
                case .position(let n) where event.position > n: return false
                case .until(let t) where event.at > t.milliseconds: return true
                default: break
                }
                batch.append(NewEvent(
                    id: event.id, stream: event.stream, type: event.type, at: event.at,
                    recordedAt: event.recordedAt, payload: event.payload
                ))
                count += 1
                if batch.count == 4096 { try flush() }
                return true
            }
            try flush()
            return count
        }
        return ReplaySummary(path: target.path, events: written, lastPosition: try target.store.lastPosition())
    }

    /// The replay of a ledger on PostgreSQL into a new file: the log read a page at a time, each page one
    /// transaction of the new file (which is removed if the replay fails).
    private func replay(
        from postgres: PostgresLedger, _ limit: ReplayLimit, into target: Ledger, progress: ((Int64, Int64) -> Void)?
    ) async throws -> ReplaySummary {
        let last = try await postgres.log.lastPosition()
        var after: Int64 = 0
        var count: Int64 = 0
        pages: while true {
            let page = try await postgres.log.events(after: after, limit: 4096)
            guard let end = page.last?.position else { break }
            var batch: [NewEvent] = []
            var stop = false
            for event in page {
                switch limit {
                case .position(let n) where event.position > n: stop = true
                case .until(let t) where event.at > t.milliseconds: continue
                default: break
                }
                if stop { break }
                batch.append(NewEvent(
                    id: event.id, stream: event.stream, type: event.type, at: event.at,
                    recordedAt: event.recordedAt, payload: event.payload))
            }
            if !batch.isEmpty {
                let events = batch
                _ = try await target.store.importTransaction { session in try session.append(AppendBatch(events: events)) }
                count += Int64(batch.count)
                progress?(count, last)
            }
            if stop { break pages }
            after = end
        }
        return ReplaySummary(path: target.path, events: count, lastPosition: try target.store.lastPosition())
    }
}
