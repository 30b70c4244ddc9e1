import ActivityModel
import Foundation
import GRDB
import GRDBSQLite

/// The truth feed spooled into a temporary SQLite file, keyed by activity, so the nightly job can merge it with
/// the ledger's activities in id order with bounded memory whatever the feed's size (a dictionary of a million
/// items would cost hundreds of megabytes). Removed on deinit.
final class TruthSpool {
    struct Row: Sendable {
        var activity: String
        /// The state as canonical JSON text (`CanonicalJSON`); parsed only for activities that are folded.
        var stateText: String?
        var done: Bool
        var line: Int

        var state: JSONValue? { stateText.flatMap { try? JSONParser.parse($0) } }
    }

    let path: String
    private let queue: DatabaseQueue
    private(set) var items = 0
    private(set) var lines = 0
    /// The first invalid lines (at most `invalidLimit`), and how many there were in all.
    private(set) var invalid: [InvalidTruthLine] = []
    private(set) var invalidCount = 0
    static let invalidLimit = 1000

    init() throws {
        path = FileManager.default.temporaryDirectory.path + "/ledger-truth-\(UUID().uuidString.prefix(12)).sqlite"
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -16000")
        }
        queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE truth (
                        activity TEXT PRIMARY KEY NOT NULL, state TEXT, done INTEGER NOT NULL,
                        at INTEGER, line INTEGER NOT NULL
                    ) WITHOUT ROWID
                    """)
        }
    }

    deinit {
        for file in [path, path + "-journal", path + "-wal", path + "-shm"] {
            try? FileManager.default.removeItem(atPath: file)
        }
    }

    /// Reads the whole feed; invalid lines are counted (and the first ones kept), never thrown.
    ///
    /// Lines are parsed 8,192 at a time in a task of their own while the lines before them are inserted on the
    /// calling thread: parsing (JSON, canonical state) and inserting cost about the same.
    func load(_ reader: JSONLinesReader, progress: (Int64) -> Void = { _ in }) async throws {
        var parsing: Task<[Parsed], Never>?
        while true {
            var raw: [(number: Int, bytes: [UInt8])] = []
            raw.reserveCapacity(Self.batchSize)
            while raw.count < Self.batchSize, let line = try reader.next() {
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                raw.append((reader.lineNumber, Array(line)))
            }
            let next = raw.isEmpty ? nil : Task { raw.map(Parsed.init) }
            if let parsing {
                try insert(await parsing.value)
                progress(reader.bytesRead)
            }
            guard let next else { break }
            parsing = next
        }
        lines = reader.lineNumber
    }

    static let batchSize = 8192

    /// A line parsed and ready to insert (its state as canonical JSON), or why it is invalid.
    enum Parsed: Sendable {
        case item(TruthItem, canonicalState: [UInt8]?)
        case invalid(InvalidTruthLine)

        init(number: Int, bytes: [UInt8]) {
            do {
                var item = try TruthItem(line: bytes, number: number)
                let canonical = item.state.map(CanonicalJSON.bytes)
                item.state = nil
                self = .item(item, canonicalState: canonical)
            } catch {
                let reason = (error as? LedgerError)?.message ?? "\(error)"
                self = .invalid(InvalidTruthLine(line: number, reason: reason))
            }
        }
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private func insert(_ batch: [Parsed]) throws {
        var valid: [(item: TruthItem, canonicalState: [UInt8]?)] = []
        valid.reserveCapacity(batch.count)
        for parsed in batch {
            switch parsed {
            case .item(let item, let canonicalState):
                valid.append((item, canonicalState))
            case .invalid(let line):
                invalidCount += 1
                if invalid.count < Self.invalidLimit { invalid.append(line) }
            }
        }
        guard !valid.isEmpty else { return }
        try queue.inTransaction { db in
            let statement = try db.cachedStatement(
                sql: """
                    INSERT INTO truth (activity, state, done, at, line) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (activity) DO UPDATE SET state = excluded.state, done = excluded.done,
                        at = excluded.at, line = excluded.line
                    WHERE coalesce(excluded.at, -9223372036854775808) >= coalesce(truth.at, -9223372036854775808)
                    """)
            // Bound through the C API: a million GRDB argument arrays cost more than the inserts themselves.
            let raw = statement.sqliteStatement
            for (item, canonicalState) in valid {
                sqlite3_reset(raw)
                sqlite3_bind_text(raw, 1, item.activity, -1, Self.transient)
                if let state = canonicalState {
                    state.withUnsafeBufferPointer { bytes in
                        bytes.withMemoryRebound(to: CChar.self) {
                            _ = sqlite3_bind_text(raw, 2, $0.baseAddress, Int32($0.count), Self.transient)
                        }
                    }
                } else {
                    sqlite3_bind_null(raw, 2)
                }
                sqlite3_bind_int64(raw, 3, item.done ? 1 : 0)
                if let at = item.at { sqlite3_bind_int64(raw, 4, at.milliseconds) } else { sqlite3_bind_null(raw, 4) }
                sqlite3_bind_int64(raw, 5, Int64(item.line))
                let code = sqlite3_step(raw)
                guard code == SQLITE_DONE else {
                    let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
                    sqlite3_reset(raw)
                    throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
                }
            }
            sqlite3_reset(raw)
            sqlite3_clear_bindings(raw)
            return .commit
        }
        items += valid.count
    }

    /// Distinct activities in the spool.
    func count() throws -> Int {
        try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM truth") ?? 0 }
    }

    /// The spool's rows in activity order, readable from any task once `load` returned.
    var pages: Pages { Pages(queue: queue) }

    struct Pages: Sendable {
        fileprivate let queue: DatabaseQueue

        /// Up to `limit` rows after `after`, in activity order.
        func page(after: String?, limit: Int = 4096) throws -> [Row] {
            try queue.read { db in
                let cursor = try GRDB.Row.fetchCursor(
                    db.cachedStatement(
                        sql: "SELECT activity, state, done, line FROM truth WHERE activity > ? ORDER BY activity LIMIT ?"),
                    arguments: [after ?? "", limit])
                var rows: [Row] = []
                while let row = try cursor.next() {
                    rows.append(Row(activity: row[0], stateText: row[1], done: row[2], line: row[3]))
                }
                return rows
            }
        }
    }
}
