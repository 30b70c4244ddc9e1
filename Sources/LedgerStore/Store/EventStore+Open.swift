import Foundation
import GRDB
import GRDBSQLite

/// Opening the file: never adopting a foreign one, never writing when read-only, and SQLite errors turned into
/// `StoreError`s that name the file.
extension EventStore {
    /// GRDB's configuration for the store's connections.
    static func connectionConfiguration(_ configuration: StoreConfiguration) -> Configuration {
        var config = Configuration()
        config.readonly = configuration.readOnly
        config.label = "LedgerStore"
        config.maximumReaderCount = StoreConfiguration.maximumReaders
        // Another process's write lock (or the exclusive lock of a last connection closing) is waited for,
        // not answered with an immediate SQLITE_BUSY.
        config.busyMode = .timeout(configuration.busyTimeout.seconds)
        return config
    }

    /// Refuses, before anything is written, a file that holds tables but none of the migrations the store (or
    /// its integrator, `StoreConfiguration.companionMigrations`) knows: an unrelated SQLite database is never
    /// adopted. A missing or empty file is fine: it becomes a new store.
    static func refuseForeign(path: String, configuration: StoreConfiguration, config: Configuration) throws {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
        guard size > 0 else { return }
        var peek = config
        peek.readonly = true
        let contents = try DatabaseQueue(path: path, configuration: peek).read { db in
            try FileContents(db)
        }
        let known = Set(Schema.migrations.map(\.name)).union(configuration.companionMigrations)
        if !contents.tables.isEmpty && contents.migrations.isDisjoint(with: known) {
            throw notALedger(path)
        }
    }

    /// Opens the pool read-only and checks that the file is a store with every migration applied.
    ///
    /// A reader of a WAL file needs its `-shm` (the WAL index), which SQLite creates beside the file. In a folder
    /// the process may not write, a file whose last writer closed cleanly has no `-wal`/`-shm` and SQLite refuses
    /// to read it ("attempt to write a readonly database"); with no `-wal` the file itself holds every committed
    /// transaction, so it is then opened with `immutable=1`, which reads it without any shared memory or lock.
    static func openReadOnly(path: String, config: Configuration) throws -> DatabasePool {
        do {
            let pool = try DatabasePool(path: path, configuration: config)
            try pool.read { db in try checkCurrent(db, path: path) }
            return pool
        } catch let error as DatabaseError
            where [.SQLITE_READONLY, .SQLITE_CANTOPEN].contains(error.resultCode)
            && !FileManager.default.fileExists(atPath: path + "-wal")
        {
            let pool = try DatabasePool(path: immutableURI(path), configuration: config)
            try pool.read { db in try checkCurrent(db, path: path) }
            return pool
        }
    }

    /// `file:` URI of `path` with `immutable=1` (the system SQLite accepts URIs: `SQLITE_USE_URI`).
    static func immutableURI(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        let escaped = absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute
        return "file:\(escaped)?mode=ro&immutable=1"
    }

    /// A read-only open needs a store whose migrations are all applied: it cannot apply them.
    static func checkCurrent(_ db: Database, path: String) throws {
        let contents = try FileContents(db)
        guard contents.tables.contains("events") else { throw notALedger(path) }
        let missing = Schema.migrations.map(\.name).filter { !contents.migrations.contains($0) }
        guard missing.isEmpty else { throw outdated(path) }
    }

    static func notALedger(_ path: String) -> StoreError {
        StoreError(.notALedger, "\(path) is not an activity ledger (it holds other tables); refusing to use it")
    }

    /// The one-line reason for a file a read-only command cannot use as it is.
    public static func outdated(_ path: String) -> StoreError {
        StoreError(
            .outdated,
            "\(path) was written by an older version: run `activity-ledger migrate --db \(path)` (or let a writing command upgrade it)")
    }

    /// An SQLite failure as a `StoreError`; any other error is returned as it is. The message does not name the
    /// file (an HTTP client sees it); the CLI adds the path to every storage failure it prints.
    public static func storageError(_ error: any Error, path: String, busyTimeout: Duration) -> any Error {
        guard let error = error as? DatabaseError else { return error }
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return StoreError(
                .busy,
                "the ledger file is busy: another process held its lock for more than \(busyTimeout.seconds) s (the busy timeout); try again")
        default:
            return StoreError(.storage, "SQLite: \(error.message ?? error.resultCode.description)")
        }
    }
}

/// What a file holds: its tables (SQLite's own aside) and the migrations GRDB recorded in it.
struct FileContents {
    var tables: Set<String>
    var migrations: Set<String>

    init(_ db: Database) throws {
        tables = try String.fetchSet(
            db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        migrations =
            tables.contains("grdb_migrations")
            ? try String.fetchSet(db, sql: "SELECT identifier FROM grdb_migrations") : []
    }
}

extension Duration {
    /// Whole and fractional seconds, for SQLite's busy timeout and messages.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// Milliseconds for `sqlite3_busy_timeout`, as GRDB's `busyMode = .timeout` sets them.
    var sqliteMilliseconds: Int32 { Int32(clamping: Int64(seconds * 1000)) }
}
