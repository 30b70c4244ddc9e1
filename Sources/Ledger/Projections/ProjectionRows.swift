import ActivityModel
import Foundation
import GRDB
import LedgerStore

/// The projection tables as `ProjectionBatch` reads and writes them: the rules live in the batch, the row I/O here,
/// once per backend (`SQLiteProjectionRows`; `PostgresProjectionRows` for a ledger on PostgreSQL). Called inside
/// the transaction of the append (or rebuild) that the rows follow from.
protocol ProjectionRows {
    /// Called once with every event of a batch before any is applied (a backend may read the rows they touch in
    /// one go; SQLite reads them as asked).
    mutating func prepare(_ events: [ProjectionEvent]) throws
    /// A push-to-start token of an installation (key), first seen at `at` (the earliest `at` is kept).
    mutating func addStartToken(installation: String, token: String, at: Int64) throws
    /// A token of an activity (key), first seen at `at` (the earliest is kept).
    mutating func addToken(_ token: String, activity: String, at: Int64) throws
    /// A stored token is dead from `from` (the earliest death is kept); a token not stored yet is left alone.
    mutating func killToken(_ token: String, from: Int64) throws
    /// An activity subscribed to a channel from `since` (the earliest is kept).
    mutating func addMember(channel: String, activity: String, since: Int64) throws
    /// The activities subscribed to `channel` at `at` (any order).
    mutating func members(of channel: String, at: Int64) throws -> [String]
    /// The stored row of an activity.
    mutating func summary(_ activity: String) throws -> ActivitySummary?
    /// Inserts or replaces rows.
    mutating func write(_ rows: some Sequence<ActivitySummary>) throws
    /// Counts events into stored rows in place (`ActivitySummary.count(_:)`), without reading them; returns the
    /// activities it did not count (no stored row, or a store that does not count in place), which the batch
    /// reads, counts and writes as it does any row.
    mutating func count(_ counted: [String: ActivitySummary.Counted]) throws -> [String]
    /// The position up to which the rows hold the projection.
    mutating func savePosition(_ position: Int64) throws
}

/// The projection's rows in the ledger file, through cached statements (the append hot path).
struct SQLiteProjectionRows: ProjectionRows {
    let db: Database
    let tables: ProjectionTables
    private var selectSummary: Statement?
    private var insertSummary: Statement?
    private var updateSummary: Statement?
    /// The indexed columns of the rows known to be stored (read by `summary` or written here), so that a row whose
    /// indexed columns did not change is updated in place (`SummaryRow.updateStatement`). Bounded by
    /// `storedCapacity` (a rebuild writes every activity through one value): a row not known is replaced.
    private var stored: [String: SummaryRow.Indexed] = [:]
    static let storedCapacity = 65_536

    private mutating func remember(_ activity: String, _ indexed: SummaryRow.Indexed) {
        if stored.count >= Self.storedCapacity { stored.removeAll(keepingCapacity: true) }
        stored[activity] = indexed
    }

    init(db: Database, tables: ProjectionTables = .live) {
        self.db = db
        self.tables = tables
    }

    func prepare(_ events: [ProjectionEvent]) {}

    func addStartToken(installation: String, token: String, at: Int64) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO \(tables.startTokens) (installation, token, at) VALUES (?, ?, ?)
                ON CONFLICT (installation, token) DO UPDATE SET at = min(at, excluded.at)
                """
        ).execute(arguments: [installation, token, at])
    }

    func addToken(_ token: String, activity: String, at: Int64) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO \(tables.tokens) (token, activity, first_at) VALUES (?, ?, ?)
                ON CONFLICT (token) DO UPDATE SET first_at = min(first_at, excluded.first_at)
                """
        ).execute(arguments: [token, activity, at])
    }

    func killToken(_ token: String, from: Int64) throws {
        try db.cachedStatement(
            sql: "UPDATE \(tables.tokens) SET dead_at = min(coalesce(dead_at, ?), ?) WHERE token = ?"
        ).execute(arguments: [from, from, token])
    }

    func addMember(channel: String, activity: String, since: Int64) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO \(tables.channelMembers) (channel, activity, since) VALUES (?, ?, ?)
                ON CONFLICT (channel, activity) DO UPDATE SET since = min(since, excluded.since)
                """
        ).execute(arguments: [channel, activity, since])
    }

    func members(of channel: String, at: Int64) throws -> [String] {
        try String.fetchAll(
            db.cachedStatement(sql: "SELECT activity FROM \(tables.channelMembers) WHERE channel = ? AND since <= ?"),
            arguments: [channel, at]
        )
    }

    mutating func summary(_ activity: String) throws -> ActivitySummary? {
        if selectSummary == nil { selectSummary = try SummaryRow.selectStatement(db, table: tables.activities) }
        let row = try SummaryRow.fetch(selectSummary!, activity: activity, db: db)
        if let row { remember(activity, SummaryRow.Indexed(row)) }
        return row
    }

    mutating func write(_ rows: some Sequence<ActivitySummary>) throws {
        for row in rows {
            let indexed = SummaryRow.Indexed(row)
            if stored[row.activity] == indexed {
                if updateSummary == nil { updateSummary = try SummaryRow.updateStatement(db, table: tables.activities) }
                try SummaryRow.write(row, updateSummary!, db: db)
            } else {
                if insertSummary == nil { insertSummary = try SummaryRow.insertStatement(db, table: tables.activities) }
                try SummaryRow.write(row, insertSummary!, db: db)
                remember(row.activity, indexed)
            }
        }
    }

    func count(_ counted: [String: ActivitySummary.Counted]) throws -> [String] {
        guard !counted.isEmpty else { return [] }
        // `ActivitySummary.count(_:)` in SQL; the columns it sets are in no index.
        let statement = try db.cachedStatement(
            sql: """
                UPDATE \(tables.activities) SET events = events + ?2, first_position = coalesce(first_position, ?3),
                    last_position = ?4, last_at = max(coalesce(last_at, ?5), ?5)
                WHERE activity = ?1
                """)
        var missing: [String] = []
        for (activity, count) in counted {
            defer { statement.resetBindings() }
            statement.bind(activity, at: 1)
            statement.bind(count.events, at: 2)
            statement.bind(count.firstPosition, at: 3)
            statement.bind(count.lastPosition, at: 4)
            statement.bind(count.lastAt, at: 5)
            _ = try statement.stepRow(db)
            if db.changesCount == 0 { missing.append(activity) }
        }
        return missing
    }

    func savePosition(_ position: Int64) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO \(tables.positions) (name, position) VALUES (?, ?)")
            .execute(arguments: [ActivityProjector.name, position])
    }
}
