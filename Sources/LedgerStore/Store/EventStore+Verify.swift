import Foundation
import Crypto
import GRDB

extension EventStore {
    /// The last position and its chain hash.
    public func digest() throws -> Digest {
        try pool.read { db in try digest(in: db) }
    }

    /// ``digest()`` as `db` sees the log.
    public func digest(in db: Database) throws -> Digest {
        guard let row = try Row.fetchOne(db, sql: "SELECT position, hash FROM events ORDER BY position DESC LIMIT 1")
        else { return Digest(position: 0, hash: ChainHasher.genesis) }
        return Digest(position: row["position"], hash: Array(row["hash"] as Data))
    }

    /// Recomputes the hash chain in one streaming pass and names the first bad position.
    ///
    /// With `upTo`, checks the rows up to its position and that the hash there equals the digest's, which
    /// proves the log up to that point is unchanged since the digest was taken.
    /// `progress` receives (rows checked, rows to check) now and then.
    public func verify(upTo digest: Digest? = nil, progress: ((Int64, Int64) -> Void)? = nil) throws -> VerifyReport {
        try pool.read { db in try verify(in: db, upTo: digest, progress: progress) }
    }

    /// ``verify(upTo:progress:)`` of the log as `db` sees it.
    public func verify(
        in db: Database, upTo digest: Digest? = nil, progress: ((Int64, Int64) -> Void)? = nil
    ) throws -> VerifyReport {
        do {
            let last = try lastPosition(in: db)
            let limit = min(digest?.position ?? last, last)
            var checker = ChainChecker()
            let namespacedFrom = try Self.namespacedFrom(db)
            let prefix: @Sendable (RecordedEvent) -> SHA256 = { ChainHasher.prefix($0, namespacedFrom: namespacedFrom) }
            // Reading, decompression and all of each row's hash but its last 32 bytes (the previous hash) run
            // beside this thread (`ChainHasher.prefix`); here each hash is finished in chain order.
            let check = { (event: RecordedEvent, prefix: SHA256) -> Bool in
                let ok = checker.check(event, prefix: prefix)
                if ok, checker.checked % 65_536 == 0 { progress?(checker.checked, limit) }
                return ok
            }
            do {
                if ParallelScan.worthReaders(events: limit) {
                    try ParallelScan.run(
                        path: pool.path, db: db, after: 0, last: limit, decoders: decoders, transform: prefix,
                        check)
                } else {
                    let statement = try db.makeStatement(
                        sql: EventReader.columns + " WHERE e.position <= ? ORDER BY e.position")
                    statement.bind(limit, at: 1)
                    try decoders.withHandle { decoder in
                        try ScanPipeline.run(statement, db: db, decoder: decoder, transform: prefix, check)
                    }
                }
            } catch let error as RowDecodingError {
                checker.undecodable(error)
            }
            progress?(checker.checked, limit)
            var report = checker.report
            if report.ok, report.checked < limit {
                report.ok = false
                report.firstBadPosition = report.checked + 1
                report.reason = "row \(report.checked + 1) is missing"
            }
            if report.ok, let digest {
                if digest.position > last {
                    report.ok = false
                    report.firstBadPosition = last + 1
                    report.reason = "the digest names position \(digest.position) but the log ends at \(last)"
                } else if report.lastGood.hash != digest.hash {
                    report.ok = false
                    report.firstBadPosition = digest.position
                    report.reason = "the hash at position \(digest.position) differs from the digest"
                }
            }
            return report
        }
    }
}

extension EventStore {
    /// The first position whose hash covers the app-qualified stream name and id (see `Namespaced`); 0 when
    /// every row's does. Set once, by the migration that made apps namespaces, in `store_counters`.
    public static func namespacedFrom(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT value FROM store_counters WHERE name = 'namespaced_from'") ?? 0
    }
}

/// Walks rows in position order and checks each against its predecessor.
struct ChainChecker {
    private(set) var checked: Int64 = 0
    private(set) var report = VerifyReport(ok: true, checked: 0, lastGood: Digest(position: 0, hash: ChainHasher.genesis))

    /// Checks `event` against its predecessor; `prefix` is `ChainHasher.prefix(event)`.
    mutating func check(_ event: RecordedEvent, prefix: SHA256) -> Bool {
        let expected = report.lastGood.position + 1
        guard event.position == expected else { return fail(expected, "row \(expected) is missing") }
        let computed = ChainHasher.finish(prefix, previous: report.lastGood.hash)
        guard computed == event.hash else { return fail(expected, "row \(expected) does not match its hash") }
        checked += 1
        report.checked = checked
        report.lastGood = Digest(position: event.position, hash: computed)
        return true
    }

    /// The scan stopped at a row it could not decode; every row before it was checked. A gap before that row
    /// is what is wrong first.
    mutating func undecodable(_ error: RowDecodingError) {
        let expected = report.lastGood.position + 1
        guard report.ok else { return }
        if error.position != expected {
            _ = fail(expected, "row \(expected) is missing")
        } else {
            _ = fail(expected, "row \(expected) does not decode: \(error.error)")
        }
    }

    private mutating func fail(_ position: Int64, _ reason: String) -> Bool {
        report.ok = false
        report.firstBadPosition = position
        report.reason = reason
        return false
    }
}
