import ActivityModel
import Foundation
import GRDB
import LedgerStore

/// Reads and writes `ActivitySummary` rows with cached statements (the append hot path).
enum SummaryRow {
    static let columns = """
        activity, attributes_type, installation, push_type, channel, origin, requested_at, start_at, token, \
        token_at, token_position, ended_at, ended_by, end_policy, end_policy_date, dismissed_at, dismissed_by, \
        content_timestamp, stale_at, events, first_position, last_position, last_at, facts_at, intended_at, \
        intended_position, intended_hash, requests, doubts
        """

    /// The statement `fetch` runs (a batch asks for it once, not per row).
    static func selectStatement(_ db: Database, table: String) throws -> Statement {
        try db.cachedStatement(sql: "SELECT \(columns) FROM \(table) WHERE activity = ?")
    }

    /// The statement `write` runs for a new row, or one whose indexed columns changed.
    static func insertStatement(_ db: Database, table: String) throws -> Statement {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO \(table) (\(columns)) VALUES (\(placeholders))")
    }

    /// The statement `write` runs for a stored row whose `Indexed` columns are unchanged: it sets every other
    /// column (the same parameter numbers as the insert, so `write` binds both) and leaves the secondary indexes
    /// alone. INSERT OR REPLACE deletes the row and inserts it again, and so its entry in every index: for
    /// `activities_by_token`, a random page of an index as large as the table, per row written.
    static func updateStatement(_ db: Database, table: String) throws -> Statement {
        try db.cachedStatement(sql: "UPDATE \(table) SET \(unindexedAssignments) WHERE activity = ?1")
    }

    /// The columns of the activities table's secondary indexes (101_projections.sql), as a row holds them.
    struct Indexed: Equatable {
        var attributesType: String?
        var installation: String?
        var token: String?

        init(_ s: ActivitySummary) {
            attributesType = s.attributesType
            installation = s.installation
            token = s.token
        }
    }

    private static let placeholders = Array(repeating: "?", count: 29).joined(separator: ",")

    /// `name = ?N` for every column but the key and `Indexed`'s, N its place in `columns`.
    private static let unindexedAssignments: String = columns.split(separator: ",").enumerated().compactMap {
        index, name -> String? in
        let name = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !["activity", "attributes_type", "installation", "token"].contains(name) else { return nil }
        return "\(name) = ?\(index + 1)"
    }.joined(separator: ", ")

    /// The stored row of `activity`, read with the raw column API (see LedgerStore's `SQLiteBinding`).
    static func fetch(_ statement: Statement, activity: String, db: Database) throws -> ActivitySummary? {
        statement.bind(activity, at: 1)
        defer { statement.resetBindings() }
        guard try statement.stepRow(db) else { return nil }
        let row = statement
        var s = ActivitySummary(activity: row.text(at: 0))
        s.attributesType = row.optionalText(at: 1)
        s.installation = row.optionalText(at: 2)
        s.pushType = row.optionalText(at: 3)
        s.channel = row.optionalText(at: 4)
        s.origin = row.optionalText(at: 5)
        s.requestedAt = row.optionalInt64(at: 6)
        s.startAt = row.optionalInt64(at: 7)
        s.token = row.optionalText(at: 8)
        s.tokenAt = row.optionalInt64(at: 9)
        s.tokenPosition = row.optionalInt64(at: 10)
        s.endedAt = row.optionalInt64(at: 11)
        s.endedBy = row.optionalText(at: 12)
        s.endPolicy = row.optionalText(at: 13)
        s.endPolicyDate = row.optionalInt64(at: 14)
        s.dismissedAt = row.optionalInt64(at: 15)
        s.dismissedBy = row.optionalText(at: 16)
        s.contentTimestamp = row.optionalInt64(at: 17)
        s.staleAt = row.optionalInt64(at: 18)
        s.events = row.int64(at: 19)
        s.firstPosition = row.optionalInt64(at: 20)
        s.lastPosition = row.optionalInt64(at: 21)
        s.lastAt = row.optionalInt64(at: 22)
        s.factsAt = row.optionalInt64(at: 23)
        s.intendedAt = row.optionalInt64(at: 24)
        s.intendedPosition = row.optionalInt64(at: 25)
        s.intendedHash = row.optionalData(at: 26)
        s.requests = row.int64(at: 27)
        s.doubts = row.int64(at: 28)
        return s
    }

    /// Inserts (or replaces, or updates: `insertStatement`, `updateStatement`) the row, binding with the raw API.
    static func write(_ s: ActivitySummary, _ statement: Statement, db: Database) throws {
        defer { statement.resetBindings() }
        statement.bind(s.activity, at: 1)
        statement.bind(s.attributesType, at: 2)
        statement.bind(s.installation, at: 3)
        statement.bind(s.pushType, at: 4)
        statement.bind(s.channel, at: 5)
        statement.bind(s.origin, at: 6)
        statement.bind(s.requestedAt, at: 7)
        statement.bind(s.startAt, at: 8)
        statement.bind(s.token, at: 9)
        statement.bind(s.tokenAt, at: 10)
        statement.bind(s.tokenPosition, at: 11)
        statement.bind(s.endedAt, at: 12)
        statement.bind(s.endedBy, at: 13)
        statement.bind(s.endPolicy, at: 14)
        statement.bind(s.endPolicyDate, at: 15)
        statement.bind(s.dismissedAt, at: 16)
        statement.bind(s.dismissedBy, at: 17)
        statement.bind(s.contentTimestamp, at: 18)
        statement.bind(s.staleAt, at: 19)
        statement.bind(s.events, at: 20)
        statement.bind(s.firstPosition, at: 21)
        statement.bind(s.lastPosition, at: 22)
        statement.bind(s.lastAt, at: 23)
        statement.bind(s.factsAt, at: 24)
        statement.bind(s.intendedAt, at: 25)
        statement.bind(s.intendedPosition, at: 26)
        statement.bind(s.intendedState?.hash ?? s.intendedHash, at: 27)
        statement.bind(s.requests, at: 28)
        statement.bind(s.doubts, at: 29)
        _ = try statement.stepRow(db)
    }
}
