import Foundation
import GRDB
import GRDBSQLite

/// The naive ledger the SPEC §8 figures are compared with: raw JSON lines in plain SQLite
/// (`raw(position, stream, json)` with an index on stream), parsed with Foundation when asked.
struct NaiveJSONLedger {
    let pool: DatabasePool

    init(path: String, synchronous: String) throws {
        var config = Configuration()
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = \(synchronous)") }
        pool = try DatabasePool(path: path, configuration: config)
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS raw (position INTEGER PRIMARY KEY, stream TEXT NOT NULL, json TEXT NOT NULL);
                CREATE INDEX IF NOT EXISTS raw_by_stream ON raw(stream);
                """)
        }
    }

    /// Inserts every line in one durable transaction (as `activity-ledger import` does).
    func importAll(_ lines: [String]) throws {
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        try pool.write { db in
            let statement = try db.makeStatement(sql: "INSERT INTO raw(stream, json) VALUES (?, ?)")
            for line in lines {
                let stream = Self.stream(of: line)
                sqlite3_bind_text(statement.sqliteStatement, 1, stream, -1, transient)
                sqlite3_bind_text(statement.sqliteStatement, 2, line, -1, transient)
                guard sqlite3_step(statement.sqliteStatement) == SQLITE_DONE else {
                    throw DatabaseError(message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
                }
                sqlite3_reset(statement.sqliteStatement)
            }
        }
    }

    /// Reads and parses every row: the least a rebuild from raw JSON must do.
    func parseAll() throws {
        try pool.read { db in
            let rows = try Row.fetchCursor(db, sql: "SELECT json FROM raw ORDER BY position")
            while let row = try rows.next() {
                let data: Data = row[0]
                _ = try JSONSerialization.jsonObject(with: data)
            }
        }
    }

    /// Reads an activity's rows through the stream index and parses those with `at` ≤ T (no fold at all).
    /// `at` is an RFC 3339 UTC time in the corpus's format, so string order is time order.
    func naiveState(activity: String, at: String) throws -> Int {
        try pool.read { db in
            var count = 0
            for json in try String.fetchAll(db, sql: "SELECT json FROM raw WHERE stream = ?", arguments: ["activity:" + activity]) {
                let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
                if let time = object?["at"] as? String, time <= at { count += 1 }
            }
            return count
        }
    }

    static func stream(of line: String) -> String {
        guard let range = line.range(of: "\"stream\":\"") else { return "" }
        let rest = line[range.upperBound...]
        return String(rest[..<(rest.firstIndex(of: "\"") ?? rest.endIndex)])
    }
}
