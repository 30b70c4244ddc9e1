import ActivityModel
import Foundation
import GRDB
import LedgerStore

/// A read transaction of the ledger file, as the queries read it.
struct SQLiteSnapshot: LedgerSnapshot {
    let store: EventStore
    let db: Database

    func lastPosition() throws -> Int64 { try store.lastPosition(in: db) }

    func event(id: String) throws -> RecordedEvent? { try store.event(in: db, id: id) }

    func events(stream: String, atMost: Int64) throws -> [RecordedEvent] {
        try store.events(in: db, stream: stream, atMost: atMost)
    }

    func events(stream: String, hashes: Bool) throws -> [RecordedEvent] {
        try store.events(in: db, stream: stream, hashes: hashes)
    }

    func forEachEvent(after position: Int64, _ body: (RecordedEvent) throws -> Bool) throws {
        try store.forEachEvent(in: db, after: position, body)
    }

    func digest() throws -> Digest { try store.digest(in: db) }

    func verify(upTo digest: Digest?, progress: (@Sendable (Int64, Int64) -> Void)?) throws -> VerifyReport {
        try store.verify(in: db, upTo: digest, progress: progress)
    }

    func channels(following activity: String) throws -> [String] {
        // Through the C API: asked once per folded activity (a nightly run folds tens of thousands).
        let statement = try db.cachedStatement(
            sql: "SELECT channel FROM channel_members WHERE activity = ? ORDER BY channel")
        statement.bind(activity, at: 1)
        defer { statement.resetBindings() }
        var channels: [String] = []
        while try statement.stepRow(db) { channels.append(statement.text(at: 0)) }
        return channels
    }

    func members(of channel: String, after: String?, limit: Int?) throws -> [String] {
        guard let limit else {
            return try String.fetchAll(
                db, sql: "SELECT activity FROM channel_members WHERE channel = ? ORDER BY activity", arguments: [channel])
        }
        return try String.fetchAll(
            db, sql: "SELECT activity FROM channel_members WHERE channel = ? AND activity > ? ORDER BY activity LIMIT ?",
            arguments: [channel, after ?? "", limit])
    }

    func memberCount(of channel: String) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM channel_members WHERE channel = ?", arguments: [channel]) ?? 0
    }

    func activity(withToken token: String) throws -> String? {
        try String.fetchOne(db, sql: "SELECT activity FROM tokens WHERE token = ?", arguments: [token])
    }

    func activities(ofInstallation installation: String) throws -> [String] {
        try String.fetchAll(
            db, sql: "SELECT activity FROM activities WHERE installation = ? ORDER BY activity", arguments: [installation])
    }

    func candidates(_ query: ActivityCandidates) throws -> [String] {
        let sql = query.sql(.sqlite)
        return try String.fetchAll(db, sql: sql.text, arguments: Self.arguments(sql))
    }

    func nightlyRows(after: String, app: String?, limit: Int) throws -> [NightlyScan.ActivityRow] {
        let sql = NightlyRowsQuery.sql(after: after, app: app, limit: limit, .sqlite)
        // Through the C API: a million rows read with GRDB's generic `Row` subscripts cost ~2 µs each.
        let statement = try db.cachedStatement(sql: sql.text)
        defer { statement.resetBindings() }
        for (index, argument) in sql.arguments.enumerated() {
            switch argument {
            case .text(let text): statement.bind(text, at: Int32(index + 1))
            case .int(let value): statement.bind(value, at: Int32(index + 1))
            }
        }
        var rows: [NightlyScan.ActivityRow] = []
        rows.reserveCapacity(limit)
        while try statement.stepRow(db) {
            rows.append(
                NightlyScan.ActivityRow(
                    activity: statement.text(at: 0), requestedAt: statement.optionalInt64(at: 1),
                    endedAt: statement.optionalInt64(at: 2), dismissedAt: statement.optionalInt64(at: 3),
                    facts: NightlyFacts(
                        startAt: statement.optionalInt64(at: 4), factsAt: statement.optionalInt64(at: 5),
                        intendedHash: statement.isNull(at: 6) ? nil : .init(statement.blob(at: 6)),
                        requests: statement.int64(at: 7),
                        doubts: statement.int64(at: 8), channel: statement.optionalInt64(at: 9).map { $0 != 0 } ?? true)))
        }
        try NightlyRowsQuery.markMembers(&rows, after: after) { sql in
            try String.fetchAll(db, sql: sql.text, arguments: Self.arguments(sql))
        }
        return rows
    }

    func runReport(_ key: String) throws -> [UInt8]? {
        // A ledger no nightly run has touched has no table yet (and a read-only one cannot get it).
        guard try db.tableExists("reconcile_runs") else { return nil }
        let select = try db.cachedStatement(sql: "SELECT report FROM reconcile_runs WHERE run = ?")
        defer { select.resetBindings() }
        select.bind(key, at: 1)
        guard try select.stepRow(db) else { return nil }
        // A zstd frame of the text since session 37 (`ReconcileRuns.save`); the text itself before.
        let stored = select.isBlob(at: 0)
        return stored ? try ZstdFrame.decompress(select.blob(at: 0)) : Array(select.blob(at: 0))
    }

    static func arguments(_ sql: PortableSQL) -> StatementArguments {
        StatementArguments(sql.arguments.map { argument -> any DatabaseValueConvertible in
            switch argument {
            case .text(let text): text
            case .int(let value): value
            }
        })
    }
}
