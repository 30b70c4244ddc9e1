import ActivityModel
import Foundation
import GRDB
import LedgerPostgres
import LedgerStore
import Logging
import Synchronization

/// The application: one ledger with its log (LedgerStore), the domain rules (ActivityModel) and the projections
/// that join them. Appends validate with the domain types and update the projections in the same transaction;
/// queries answer from the log by folding one activity's events.
///
/// The ledger lives in an SQLite file (the default) or a PostgreSQL database (``open(_:configuration:logger:)``
/// with a `postgresql://` URL, `PostgresLedger`). Every query is written once, against `LedgerSnapshot`.
public final class Ledger: Sendable {
    enum Storage: Sendable {
        case file(EventStore)
        case postgres(PostgresLedger)
    }

    let storage: Storage
    /// Where the ledger lives: the file's path, or the database's URL without its password.
    public let path: String
    let projector: ActivityProjector
    let logger: Logger
    public let maxEventBytes: Int
    /// ``LedgerConfiguration/queriesOnCallerThread``.
    let queriesOnCallerThread: Bool
    /// Whether one of this ledger's queries is running on its caller's thread (``read(_:)``): at most one at a
    /// time, so that many concurrent callers block at most one of their threads and take one reader connection.
    let callerThreadQuery = Atomic<Bool>(false)
    /// Signalled when the ledger grows (``waitForAppend(timeout:)``).
    let appended = AppendSignal()

    /// The store of a ledger in a file; nil on PostgreSQL.
    public var file: EventStore? {
        if case .file(let store) = storage { return store }
        return nil
    }

    /// The store of a ledger in a file (the file's own features: sealing, backup, stats, the bench's direct reads).
    /// A ledger on PostgreSQL has none: asking is a programming error; code that serves both asks ``file``.
    public var store: EventStore {
        guard let file else { preconditionFailure("\(path): a ledger on PostgreSQL has no SQLite store") }
        return file
    }

    /// True for a ledger on PostgreSQL.
    public var isPostgres: Bool { file == nil }

    /// Opens the ledger at `location`: a file (as ``init(path:configuration:logger:)``) or a PostgreSQL database,
    /// migrated (or, read-only, only checked) and with its projections caught up with the log. A read-only open
    /// writes nothing: a database whose projections are behind its log is refused with the command that fixes it,
    /// as a file is.
    public static func open(
        _ location: LedgerLocation, configuration: LedgerConfiguration = .init(), logger: Logger
    ) async throws -> Ledger {
        switch location {
        case .sqlite(let path):
            return try Ledger(path: path, configuration: configuration, logger: logger)
        case .postgres(let url):
            let readOnly = configuration.store.readOnly
            let log: PostgresEventLog
            do {
                log = try await PostgresEventLog(
                    url: url, maximumConnections: configuration.postgresConnections, readOnly: readOnly, logger: logger)
            } catch {
                throw storageError(error, path: (try? PostgresURL(url).redacted) ?? "the database")
            }
            let ledger = Ledger(postgres: PostgresLedger(log: log, url: url, logger: logger), configuration: configuration, logger: logger)
            do {
                let (projected, last) = try await ledger.postgres!.positions()
                if projected < last {
                    guard !readOnly else {
                        throw LedgerError(
                            .storage,
                            "\(log.location): its projections are behind its log (position \(projected) of \(last)); run "
                                + "`activity-ledger rebuild --db URL` (or any writing command) first")
                    }
                    try await ledger.postgres!.catchUp(projector: ledger.projector)
                }
            } catch {
                await ledger.close()
                throw storageError(error, path: log.location)
            }
            return ledger
        }
    }

    private init(postgres: PostgresLedger, configuration: LedgerConfiguration, logger: Logger) {
        storage = .postgres(postgres)
        path = postgres.location
        self.logger = logger
        maxEventBytes = configuration.maxEventBytes
        queriesOnCallerThread = configuration.queriesOnCallerThread
        projector = ActivityProjector(logger: logger)
    }

    /// The PostgreSQL storage, nil for a file.
    var postgres: PostgresLedger? {
        if case .postgres(let postgres) = storage { return postgres }
        return nil
    }

    /// Closes a PostgreSQL ledger's connections (a file's pool closes with the ledger).
    /// Closes the ledger for a process about to exit: a file's WAL is folded in and its connections closed
    /// (`EventStore.close`), a PostgreSQL pool closed. Later use fails.
    public func close() async {
        file?.close()
        if let postgres { await postgres.close() }
    }

    /// Returns when the ledger has grown, or after `timeout` (a feed's long-poll then looks again). A file's
    /// ledger wakes on this process's appends; one on PostgreSQL on every process's (LISTEN `ledger_events`).
    public func waitForAppend(timeout: Duration) async {
        postgres?.follow(appended)
        await appended.wait(timeout: timeout)
    }

    public init(path: String, configuration: LedgerConfiguration = .init(), logger: Logger) throws {
        self.path = path
        self.logger = logger
        self.maxEventBytes = configuration.maxEventBytes
        self.queriesOnCallerThread = configuration.queriesOnCallerThread
        let projector = ActivityProjector(logger: logger)
        var storeConfiguration = configuration.store
        let readOnly = storeConfiguration.readOnly
        if !readOnly { storeConfiguration.projector = projector }
        // A file holding only API keys (created before the first append) is a ledger to be; anything else with
        // tables but none of our migrations is refused, never adopted.
        storeConfiguration.companionMigrations = Set(LedgerSchema.identifiers).union(APIKeyStore.identifiers)
        let store: EventStore
        do {
            store = try EventStore(path: path, configuration: storeConfiguration, logger: logger)
        } catch let error as StoreError {
            throw LedgerError(.storage, error.message, cause: error)
        }
        storage = .file(store)
        self.projector = projector
        do {
            if readOnly {
                try checkCurrent()
            } else {
                try LedgerSchema.migrate(store.pool)
                try catchUp()
            }
        } catch let error as LedgerError {
            throw error
        } catch {
            throw Self.storageError(error, path: path, busyTimeout: storeConfiguration.busyTimeout)
        }
    }

    /// A read-only open cannot migrate or catch up: a file that needs either is refused with the command that
    /// upgrades it (any writing command does too).
    func checkCurrent() throws {
        let current = try store.pool.read { db in
            let applied = try String.fetchSet(db, sql: "SELECT identifier FROM grdb_migrations")
            guard LedgerSchema.identifiers.allSatisfy(applied.contains) else { return false }
            let done = try Int64.fetchOne(
                db, sql: "SELECT position FROM projection_positions WHERE name = ?", arguments: [ActivityProjector.name]
            ) ?? 0
            return done >= (try store.lastPosition(in: db))
        }
        guard current else { throw LedgerError(.storage, EventStore.outdated(path).message) }
    }

    /// An SQLite failure as a one-line storage error naming the file (busy: another process held the lock past
    /// the busy timeout). Other errors keep their description.
    public static func storageError(_ error: any Error, path: String, busyTimeout: Duration? = nil) -> LedgerError {
        if let error = error as? LedgerError { return error }
        if let store = error as? StoreError { return LedgerError(.storage, store.message, cause: error) }
        guard let database = error as? DatabaseError else {
            return LedgerError(.storage, "\(path): \(error)", cause: error)
        }
        if database.resultCode == .SQLITE_BUSY || database.resultCode == .SQLITE_LOCKED {
            let within = busyTimeout.map { timeout in
                let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
                return " for more than \(seconds) s (the busy timeout)"
            } ?? ""
            return LedgerError(.storage, "\(path) is busy: another process held its lock\(within); try again", cause: error)
        }
        return LedgerError(.storage, "\(path): \(database.message ?? database.resultCode.description)", cause: error)
    }

    /// The pool of the ledger file, for queries of other targets (API keys, the server).
    public var pool: DatabasePool { store.pool }

    /// Applies what the projections have not seen yet: a ledger written by an older version, or by the store alone.
    ///
    /// Where the projections stand is read inside the write transaction that applies the rest: two processes opening
    /// the same old file together each read it first and then both applied the same events, doubling the counts of
    /// `activities` (found by a probe).
    func catchUp() throws {
        let position = { (db: Database) -> (done: Int64, last: Int64) in
            let done = try Int64.fetchOne(
                db, sql: "SELECT position FROM projection_positions WHERE name = ?", arguments: [ActivityProjector.name]
            ) ?? 0
            return (done, try self.store.lastPosition(in: db))
        }
        // A look without the write lock first: an up-to-date file (nearly every open) takes no lock. On the writer's
        // connection: a reader connection opened here made a read-only connection the last to close, and the `-wal`
        // stayed behind every writing command.
        let seen = try store.pool.writeWithoutTransaction(position)
        guard seen.done < seen.last else { return }
        try store.pool.writeWithoutTransaction { db in
            try db.inTransaction(.immediate) {
                let (done, last) = try position(db)
                guard done < last else { return .commit }
                logger.info("projections behind the log: catching up", metadata: [
                    "ledger.projection.position": "\(done)", "ledger.log.position": "\(last)",
                ])
                var chunk: [RecordedEvent] = []
                try store.forEachEvent(in: db, after: done, hashes: false) { event in
                    chunk.append(event)
                    if chunk.count == 4096 {
                        try projector.apply(chunk, db: db)
                        chunk.removeAll(keepingCapacity: true)
                    }
                    return true
                }
                try projector.apply(chunk, db: db)
                return .commit
            }
        }
    }
}

/// How a ledger file is opened.
public struct LedgerConfiguration: Sendable {
    public var store: StoreConfiguration
    /// Largest accepted event (one JSON Lines line or one HTTP event object), in bytes; larger ones are refused.
    public var maxEventBytes = 256 * 1024
    /// On PostgreSQL: the most connections this process opens (README "PostgreSQL", pool sizing).
    public var postgresConnections = 8
    /// A file's query runs on the thread of the task that asks it, blocking that thread for the query's time, when
    /// no other query of the ledger is running that way; otherwise (and with this off) it is handed to the
    /// ledger's read threads and the task resumes when it is answered. The hand-off wakes two threads, one there
    /// and one back, which added 0.05 ms to a `state --at`'s p50 and 0.1–0.4 ms to its p99 (3,000 states on the
    /// 1M-event sealed corpus, BENCHMARKS.md session 34). On for the CLI and for code that embeds the ledger;
    /// `serve` turns it off, so that no HTTP handler's thread waits on SQLite.
    public var queriesOnCallerThread = true

    public init(store: StoreConfiguration = .init()) {
        self.store = store
    }

    /// Opens an existing file for queries only.
    public static var readOnly: LedgerConfiguration {
        var configuration = LedgerConfiguration()
        configuration.store.readOnly = true
        return configuration
    }
}
