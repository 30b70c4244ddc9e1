import Foundation
import GRDB
import LedgerPostgres
import LedgerStore
import PostgresNIO

/// Every row of the projection tables as text, in key order, the same on both backends: what the tests compare to
/// hold the projections equal to a rebuild, and a ledger on PostgreSQL equal to one in a file.
enum ProjectionDump {
    /// (table, columns in the order shown, key columns to order by).
    static let tables: [(String, [String], String)] = [
        ("activities", SummaryRow.columns.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }, "activity"),
        ("tokens", ["token", "activity", "first_at", "dead_at"], "token"),
        ("channel_members", ["channel", "activity", "since"], "channel, activity"),
        ("start_tokens", ["installation", "token", "at"], "installation, token"),
        ("projection_positions", ["name", "position"], "name"),
    ]

    /// The query of one table: each row one text, NULL as `∅`, bytes as lowercase hex.
    static func sql(_ table: String, _ columns: [String], orderBy: String, _ dialect: SQLDialect) -> String {
        let parts = columns.map { column -> String in
            let text: String
            switch (dialect, column) {
            case (.sqlite, "intended_hash"): text = "lower(hex(\(column)))"
            case (.postgres, "intended_hash"): text = "encode(\(column), 'hex')"
            default: text = "CAST(\(column) AS TEXT)"
            }
            return "coalesce(\(text), '∅')"
        }
        return "SELECT \(parts.joined(separator: " || '|' || ")) FROM \(table) ORDER BY \(orderBy)"
    }
}

extension Ledger {
    /// Every projection row as `table v1|v2|…` (``ProjectionDump``).
    package func projectionDump() async throws -> [String] {
        var out: [String] = []
        switch storage {
        case .file(let store):
            out = try await store.pool.read { db in
                var out: [String] = []
                for (table, columns, order) in ProjectionDump.tables {
                    out += try String.fetchAll(db, sql: ProjectionDump.sql(table, columns, orderBy: order, .sqlite))
                        .map { "\(table) \($0)" }
                }
                return out
            }
        case .postgres(let postgres):
            for (table, columns, order) in ProjectionDump.tables {
                let rows = try await postgres.log.client.query(
                    PostgresQuery(unsafeSQL: ProjectionDump.sql(table, columns, orderBy: order, .postgres)),
                    logger: postgres.logger
                ).collect()
                out += try rows.map { "\(table) \(try $0.decode(String.self))" }
            }
        }
        return out
    }
}
