import Foundation
import GRDB
import GRDBSQLite

/// The baseline of SPEC §8: a plain SQLite table `(position INTEGER PRIMARY KEY, json TEXT)` of raw JSON lines,
/// written with the raw C API in transactions of the same batch size and durability as the store.
///
/// `keyed` adds what SPEC §6 asks of every event row and nothing else: the event id (16 bytes) with its unique
/// index and the stream (an interned integer) and version with theirs; no compression, hash chain or
/// projections. Filled with `leanRowBytes` of each line, it is a row-per-event SQLite log at its leanest: what
/// plain SQLite with those two keys does on this machine (with SQLite's own checkpointing on the writer).
struct RawJSONBaseline {
    let path: String
    let synchronous: String
    var keyed = false

    /// About what the store keeps per row besides the keys (compressed payload ~86 B, hash 32, type and times).
    static let leanRowBytes = 128

    func open() throws -> DatabasePool {
        var config = Configuration()
        let synchronous = self.synchronous
        let keyed = self.keyed
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            // The lean row-per-event log gets the store's page cache (32 MB): its random id index needs it.
            if keyed { try db.execute(sql: "PRAGMA cache_size = -32768") }
        }
        let pool = try DatabasePool(path: path, configuration: config)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS raw (position INTEGER PRIMARY KEY, json TEXT NOT NULL)")
            if keyed {
                try db.execute(sql: """
                    ALTER TABLE raw ADD COLUMN stream INTEGER;
                    ALTER TABLE raw ADD COLUMN version INTEGER;
                    ALTER TABLE raw ADD COLUMN id BLOB;
                    CREATE UNIQUE INDEX raw_by_stream_version ON raw(stream, version);
                    CREATE UNIQUE INDEX raw_by_id ON raw(id);
                    """)
            }
        }
        return pool
    }

    /// One row's keys for the `keyed` table: the event id's 16 bytes, the stream's number and its version.
    struct Keys {
        var id: [UInt8]
        var stream: Int64
        var version: Int64
    }

    /// Numbers streams in order of appearance and counts their versions, as the store does.
    struct KeyAssigner {
        private var streams: [String: (number: Int64, version: Int64)] = [:]

        mutating func keys(id: String, stream: String) -> Keys {
            var slot = streams[stream] ?? (Int64(streams.count + 1), 0)
            slot.version += 1
            streams[stream] = slot
            return Keys(id: Self.uuidBytes(id), stream: slot.number, version: slot.version)
        }

        /// The 16 bytes of a UUID string (the corpus only makes UUIDs; anything else gives zeros).
        static func uuidBytes(_ id: String) -> [UInt8] {
            let hex = Array(id.utf8.filter { $0 != UInt8(ascii: "-") })
            guard hex.count == 32 else { return Array(repeating: 0, count: 16) }
            func nibble(_ c: UInt8) -> UInt8 { c <= 57 ? c - 48 : (c | 0x20) - 87 }
            return (0..<16).map { nibble(hex[2 * $0]) << 4 | nibble(hex[2 * $0 + 1]) }
        }
    }

    /// Inserts each batch of lines with their keys in its own transaction (`keyed` tables).
    func importKeyedBatches(_ batches: [[(line: String, keys: Keys)]], into pool: DatabasePool) throws {
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for batch in batches {
            try pool.write { db in
                let statement = try db.cachedStatement(
                    sql: "INSERT INTO raw(json, stream, version, id) VALUES (?, ?, ?, ?)")
                let handle = statement.sqliteStatement
                for (line, keys) in batch {
                    sqlite3_bind_text(handle, 1, line, -1, transient)
                    sqlite3_bind_int64(handle, 2, keys.stream)
                    sqlite3_bind_int64(handle, 3, keys.version)
                    keys.id.withUnsafeBytes { _ = sqlite3_bind_blob(handle, 4, $0.baseAddress, 16, transient) }
                    guard sqlite3_step(handle) == SQLITE_DONE else {
                        throw DatabaseError(message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
                    }
                    sqlite3_reset(handle)
                }
            }
        }
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
