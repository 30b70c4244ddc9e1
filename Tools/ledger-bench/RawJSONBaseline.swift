import Foundation
import GRDB
import GRDBSQLite

/// The baseline of SPEC §8: a plain SQLite table `(position INTEGER PRIMARY KEY, json TEXT)` of raw JSON lines,
/// written with the raw C API in transactions of the same batch size and durability as the store.
struct RawJSONBaseline {
    let path: String
    let synchronous: String

    func open() throws -> DatabasePool {
        var config = Configuration()
        let synchronous = self.synchronous
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = \(synchronous)") }
        let pool = try DatabasePool(path: path, configuration: config)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS raw (position INTEGER PRIMARY KEY, json TEXT NOT NULL)")
        }
        return pool
    }

    /// Inserts each batch of lines in its own transaction.
    func importBatches(_ batches: [[String]], into pool: DatabasePool) throws {
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for batch in batches {
            try pool.write { db in
                let statement = try db.cachedStatement(sql: "INSERT INTO raw(json) VALUES (?)")
                for line in batch {
                    sqlite3_bind_text(statement.sqliteStatement, 1, line, -1, transient)
                    guard sqlite3_step(statement.sqliteStatement) == SQLITE_DONE else {
                        throw DatabaseError(message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
                    }
                    sqlite3_reset(statement.sqliteStatement)
                }
            }
        }
    }

    /// Reads every line (as bytes) in position order; returns the count and total bytes.
    func readAll(_ pool: DatabasePool) throws -> (count: Int, bytes: Int) {
        try pool.read { db in
            let statement = try db.makeStatement(sql: "SELECT json FROM raw ORDER BY position")
            var count = 0
            var bytes = 0
            while sqlite3_step(statement.sqliteStatement) == SQLITE_ROW {
                let text = sqlite3_column_text(statement.sqliteStatement, 0)
                let length = Int(sqlite3_column_bytes(statement.sqliteStatement, 0))
                bytes += length + (text == nil ? 0 : 1)
                count += 1
            }
            return (count, bytes)
        }
    }
}
