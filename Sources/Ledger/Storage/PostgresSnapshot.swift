import ActivityModel
import Foundation
import LedgerPostgres
import LedgerStore
import Logging
import PostgresNIO

/// A REPEATABLE READ transaction on a ledger's PostgreSQL database, as the queries read it: the same answers, in
/// the same order, as `SQLiteSnapshot` gives for the same log (names are `COLLATE "C"`, so orders are byte orders
/// there too).
///
/// The caller has begun the transaction (`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`) on `connection` and
/// calls these methods on a thread of its own (a `NIOThreadPool`'s), never an event loop: each blocks until the
/// server answered. PostgreSQL's errors come out as `StoreError(.storage, "<location>: <message>")`.
struct PostgresSnapshot: LedgerSnapshot {
    let connection: PostgresConnection
    let logger: Logger
    /// How errors name the database (`PostgresEventLog.location`: the URL without its password).
    let location: String

    /// Rows per query of `forEachEvent`.
    static let pageSize = 2_048

    // MARK: The log

    func lastPosition() throws -> Int64 { try head().position }

    func event(id: String) throws -> RecordedEvent? {
        try events(PostgresEventLog.selectColumns + " WHERE id = $1", .text(id)).first
    }

    func events(stream: String, atMost: Int64) throws -> [RecordedEvent] {
        try events(
            PostgresEventLog.selectColumns + " WHERE stream = $1 AND at <= $2 ORDER BY version", .text(stream),
            .int(atMost))
    }

    /// Rows carry their hash whatever `hashes` says (nothing to save by leaving it out).
    func events(stream: String, hashes: Bool) throws -> [RecordedEvent] {
        try events(PostgresEventLog.selectColumns + " WHERE stream = $1 ORDER BY version", .text(stream))
    }

    /// Pages of `pageSize` rows by position, each its own statement in the one snapshot.
    func forEachEvent(after position: Int64, _ body: (RecordedEvent) throws -> Bool) throws {
        var after = position
        while true {
            let page = try events(after: after, limit: Self.pageSize)
            for event in page {
                guard try body(event) else { return }
            }
            guard page.count == Self.pageSize, let last = page.last else { return }
            after = last.position
        }
    }

    func digest() throws -> Digest { try head() }

    /// As `PostgresEventLog.verify(upTo:)` (`PostgresChainScan`), inside this snapshot; `progress` after each page
    /// and at the end.
    func verify(upTo digest: Digest?, progress: (@Sendable (Int64, Int64) -> Void)?) throws -> VerifyReport {
        let (head, namespacedFrom, newest) = try storage {
            guard
                let row = try connection.rows(
                    "SELECT position, hash, namespaced_from, (\(PostgresChainScan.newestSQL)) FROM log_head",
                    logger: logger
                ).first
            else { throw StoreError(.schema, "\(location): log_head has no row") }
            let (position, hash, namespacedFrom, newest) = try row.decode((Int64, ByteBuffer, Int64, Int64).self)
            return (Digest(position: position, hash: Array(buffer: hash)), namespacedFrom, newest)
        }
        var scan = PostgresChainScan(head: head, newest: newest, namespacedFrom: namespacedFrom, digest: digest)
        while let page = scan.nextPage {
            let going = scan.check(try events(after: page.after, limit: page.limit))
            progress?(scan.checked, scan.limit)
            guard going else { break }
        }
        progress?(scan.checked, scan.limit)
        return scan.report()
    }

    // MARK: The projections

    func channels(following activity: String) throws -> [String] {
        try strings("SELECT channel FROM channel_members WHERE activity = $1 ORDER BY channel", .text(activity))
    }

    func members(of channel: String, after: String?, limit: Int?) throws -> [String] {
        guard let limit else {
            return try strings(
                "SELECT activity FROM channel_members WHERE channel = $1 ORDER BY activity", .text(channel))
        }
        return try strings(
            "SELECT activity FROM channel_members WHERE channel = $1 AND activity > $2 ORDER BY activity LIMIT $3",
            .text(channel), .text(after ?? ""), .int(Int64(limit)))
    }

    func memberCount(of channel: String) throws -> Int {
        try storage {
            let rows = try query("SELECT count(*) FROM channel_members WHERE channel = $1", [.text(channel)])
            return Int(try rows.first?.decode(Int64.self) ?? 0)
        }
    }

    func activity(withToken token: String) throws -> String? {
        try strings("SELECT activity FROM tokens WHERE token = $1", .text(token)).first
    }

    func activities(ofInstallation installation: String) throws -> [String] {
        try strings(
            "SELECT activity FROM activities WHERE installation = $1 ORDER BY activity", .text(installation))
    }

    func candidates(_ query: ActivityCandidates) throws -> [String] {
        let sql = query.sql(.postgres)
        return try strings(sql.numbered, sql.arguments)
    }

    func nightlyRows(after: String, app: String?, limit: Int) throws -> [NightlyScan.ActivityRow] {
        let sql = NightlyRowsQuery.sql(after: after, app: app, limit: limit, .postgres)
        var rows = try storage {
            try query(sql.numbered, sql.arguments).map { row in
                let (activity, requestedAt, endedAt, dismissedAt, startAt, factsAt, intendedHash, requests, doubts, channel)
                    = try row.decode(
                        (String, Int64?, Int64?, Int64?, Int64?, Int64?, ByteBuffer?, Int64, Int64, Bool?).self)
                return NightlyScan.ActivityRow(
                    activity: activity, requestedAt: requestedAt, endedAt: endedAt, dismissedAt: dismissedAt,
                    facts: NightlyFacts(
                        startAt: startAt, factsAt: factsAt, intendedHash: intendedHash.flatMap { buffer in
                            buffer.withUnsafeReadableBytes { NightlyFacts.StateHash($0) }
                        },
                        requests: requests, doubts: doubts, channel: channel ?? true))
            }
        }
        try NightlyRowsQuery.markMembers(&rows, after: after) { sql in try strings(sql.numbered, sql.arguments) }
        return rows
    }

    func runReport(_ key: String) throws -> [UInt8]? {
        // Stored as text: PostgreSQL compresses a large value itself (TOAST).
        try strings("SELECT report FROM reconcile_runs WHERE run = $1", .text(key)).first.map { Array($0.utf8) }
    }

    // MARK: Support

    private func head() throws -> Digest {
        try storage {
            guard let row = try query("SELECT position, hash FROM log_head", []).first else {
                throw StoreError(.schema, "\(location): log_head has no row")
            }
            let (position, hash) = try row.decode((Int64, ByteBuffer).self)
            return Digest(position: position, hash: Array(buffer: hash))
        }
    }

    private func events(after position: Int64, limit: Int) throws -> [RecordedEvent] {
        try events(
            PostgresEventLog.selectColumns + " WHERE position > $1 ORDER BY position LIMIT $2", .int(position),
            .int(Int64(limit)))
    }

    private func events(_ sql: String, _ arguments: PortableSQL.Argument...) throws -> [RecordedEvent] {
        try storage { try query(sql, arguments).map(PostgresEventLog.recordedEvent) }
    }

    /// The first column of each row, a text.
    private func strings(_ sql: String, _ arguments: PortableSQL.Argument...) throws -> [String] {
        try strings(sql, arguments)
    }

    private func strings(_ sql: String, _ arguments: [PortableSQL.Argument]) throws -> [String] {
        try storage { try query(sql, arguments).map { try $0.decode(String.self) } }
    }

    private func query(_ sql: String, _ arguments: [PortableSQL.Argument]) throws -> [PostgresRow] {
        try connection.rows(sql, PortableSQL.bindings(arguments), logger: logger)
    }

    /// Runs `body`; a failure of PostgreSQL (or of decoding its rows) becomes a storage error naming the database.
    private func storage<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw PostgresEventLog.storageError(error, location: location)
        }
    }
}

extension PortableSQL {
    /// The arguments as PostgreSQL binds: a text as `text` (as `PostgresText` stores it: a parameter with a NUL
    /// matches what it matches in the file, never a server error), an integer as `bigint`.
    static func bindings(_ arguments: [Argument]) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: arguments.count)
        for argument in arguments {
            switch argument {
            case .text(let text): bindings.append(PostgresText.escape(text))
            case .int(let value): bindings.append(value)
            }
        }
        return bindings
    }
}
