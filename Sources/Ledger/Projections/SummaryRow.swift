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

    /// The statement `write` runs.
    static func insertStatement(_ db: Database, table: String) throws -> Statement {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO \(table) (\(columns)) VALUES (\(placeholders))")
    }

    private static let placeholders = Array(repeating: "?", count: 29).joined(separator: ",")

    static func fetch(_ statement: Statement, activity: String) throws -> ActivitySummary? {
        try Row.fetchOne(statement, arguments: [activity]).map(decode)
    }

    static func decode(_ row: Row) -> ActivitySummary {
        var s = ActivitySummary(activity: row[0])
        s.attributesType = row[1]
        s.installation = row[2]
        s.pushType = row[3]
        s.channel = row[4]
        s.origin = row[5]
        s.requestedAt = row[6]
        s.startAt = row[7]
        s.token = row[8]
        s.tokenAt = row[9]
        s.tokenPosition = row[10]
        s.endedAt = row[11]
        s.endedBy = row[12]
        s.endPolicy = row[13]
        s.endPolicyDate = row[14]
        s.dismissedAt = row[15]
        s.dismissedBy = row[16]
        s.contentTimestamp = row[17]
        s.staleAt = row[18]
        s.events = row[19]
        s.firstPosition = row[20]
        s.lastPosition = row[21]
        s.lastAt = row[22]
        s.factsAt = row[23]
        s.intendedAt = row[24]
        s.intendedPosition = row[25]
        s.intendedHash = row[26]
        s.requests = row[27]
        s.doubts = row[28]
        return s
    }

    static func write(_ s: ActivitySummary, _ statement: Statement) throws {
        let values: [(any DatabaseValueConvertible)?] = [
            s.activity, s.attributesType, s.installation, s.pushType, s.channel, s.origin, s.requestedAt,
            s.startAt, s.token, s.tokenAt, s.tokenPosition, s.endedAt, s.endedBy, s.endPolicy, s.endPolicyDate,
            s.dismissedAt, s.dismissedBy, s.contentTimestamp, s.staleAt, s.events, s.firstPosition,
            s.lastPosition, s.lastAt, s.factsAt, s.intendedAt, s.intendedPosition,
            s.intendedState?.hash ?? s.intendedHash, s.requests, s.doubts,
        ]
        try statement.execute(arguments: StatementArguments(values))
    }
}
