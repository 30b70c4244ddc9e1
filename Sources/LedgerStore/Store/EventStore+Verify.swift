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
        let tail = try TransactionState.load(db)
        return Digest(position: tail.lastPosition, hash: tail.lastHash)
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
            // The whole log, with a digest too (SPEC §6: the chain over every event): a log broken after the
            // digest's position verified "ok" with `--digest` (found by a probe).
            let limit = last
            var checker = ChainChecker(digest: digest)
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
                // Sealed segments first: each is decoded and hashed from its own previous hash beside this thread;
                // here the segments are chained and their check values compared.
                let sealed = try EventReader.sealedThrough(db)
                if sealed > 0 {
                    _ = try SealedScan.run(
                        path: pool.path, db: db, after: 0, decoders: decoders, transform: { _ in () }
                    ) { chunk in checker.check(segment: chunk, limit: limit, progress: progress) }
                }
                let after = checker.report.lastGood.position
                if !checker.report.ok || after >= limit {
                    // Nothing left to read: every position up to the limit was sealed (or one failed).
                } else if ParallelScan.worthReaders(events: limit - after) {
                    try ParallelScan.run(
                        path: pool.path, db: db, after: after, last: limit, decoders: decoders, transform: prefix,
                        check)
                } else {
                    let statement = try db.makeStatement(
                        sql: EventReader.columns + " WHERE e.position > ? AND e.position <= ? ORDER BY e.position")
                    statement.bind(after, at: 1)
                    statement.bind(limit, at: 2)
                    try decoders.withHandle { decoder in
                        try ScanPipeline.run(statement, db: db, decoder: decoder, transform: prefix, check)
                    }
                }
            } catch let error as RowDecodingError {
                checker.undecodable(error)
            }
            progress?(checker.checked, limit)
            return checker.finish(limit: limit, last: last, digest: digest)
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

/// Walks rows in position order and checks each against its predecessor (every backend's `verify`).
package struct ChainChecker {
    package private(set) var checked: Int64 = 0
    package private(set) var report = VerifyReport(ok: true, checked: 0, lastGood: Digest(position: 0, hash: ChainHasher.genesis))
    /// The position whose hash a digest names, and that hash once the chain reached it.
    private let digestPosition: Int64?
    private var hashAtDigest: [UInt8]?

    /// `digest`: a digest to prove along the way (the whole chain is checked either way).
    package init(digest: Digest? = nil) {
        digestPosition = digest?.position
        if digest?.position == 0 { hashAtDigest = ChainHasher.genesis }
    }

    private mutating func reached(_ good: Digest) {
        report.lastGood = good
        if good.position == digestPosition { hashAtDigest = good.hash }
    }

    /// Checks `event` against its predecessor; `prefix` is `ChainHasher.prefix(event)`.
    package mutating func check(_ event: RecordedEvent, prefix: SHA256) -> Bool {
        let expected = report.lastGood.position + 1
        guard event.position == expected else { return fail(expected, "row \(expected) is missing") }
        let computed = ChainHasher.finish(prefix, previous: report.lastGood.hash)
        guard computed == event.hash else { return fail(expected, "row \(expected) does not match its hash") }
        checked += 1
        report.checked = checked
        reached(Digest(position: event.position, hash: computed))
        return true
    }

    /// Checks one sealed segment: it must start where the chain stands, follow its hash, decode, and each event's
    /// recomputed hash must match its check value (the last one also the whole `last_hash`). Stops (false) at a failure
    /// or once `limit` is reached.
    mutating func check<T>(
        segment chunk: SealedScan.Chunk<T>, limit: Int64, progress: ((Int64, Int64) -> Void)?
    ) -> Bool {
        let expected = report.lastGood.position + 1
        let range = "the segment of positions \(chunk.first)…\(chunk.last)"
        guard chunk.first == expected else { return fail(expected, "row \(expected) is missing") }
        guard chunk.previousHash == report.lastGood.hash else {
            return fail(expected, "\(range) does not follow the chain: its previous hash differs")
        }
        if let error = chunk.error {
            let reason = (error as? RowDecodingError)?.error.message ?? "\(error)"
            return fail(expected, "row \(expected) does not decode: \(reason)")
        }
        for event in chunk.events {
            guard event.position <= limit else { return false }
            if event.position == chunk.mismatch {
                return fail(event.position, "row \(event.position) (sealed in \(range)) does not match its hash")
            }
            checked += 1
            report.checked = checked
            reached(Digest(position: event.position, hash: event.hash))
            if checked % 65_536 == 0 { progress?(checked, limit) }
        }
        return chunk.last < limit
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

    /// The report once the scan is over: rows up to `limit` (the digest's position, else the log's `last`) that
    /// were never seen are missing, and a `digest` must name the hash the chain reached at its position.
    package func finish(limit: Int64, last: Int64, digest: Digest?) -> VerifyReport {
        var report = report
        if report.ok, report.checked < limit {
            report.ok = false
            report.firstBadPosition = report.checked + 1
            report.reason = "row \(report.checked + 1) is missing"
        }
        if let digest {
            report.digestProven = digest.position <= last && hashAtDigest == digest.hash
            if report.ok, digest.position > last {
                report.ok = false
                report.firstBadPosition = last + 1
                report.reason = "the digest names position \(digest.position) but the log ends at \(last)"
            } else if report.ok, hashAtDigest != digest.hash {
                report.ok = false
                report.firstBadPosition = digest.position
                report.reason = "the hash at position \(digest.position) differs from the digest"
            }
        }
        return report
    }

    private mutating func fail(_ position: Int64, _ reason: String) -> Bool {
        report.ok = false
        report.firstBadPosition = position
        report.reason = reason
        return false
    }
}
