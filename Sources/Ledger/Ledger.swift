import ActivityModel
import Foundation
import GRDB
import LedgerStore
import Logging

/// The application: one ledger file with its log (LedgerStore), the domain rules (ActivityModel) and the
/// projections that join them. Appends validate with the domain types and update the projections in the same
/// transaction; queries answer from the log by folding one activity's events.
public final class Ledger: Sendable {
    public let store: EventStore
    public let path: String
    let projector: ActivityProjector
    let logger: Logger
    public let maxEventBytes: Int

    public init(path: String, configuration: LedgerConfiguration = .init(), logger: Logger) throws {
        self.path = path
        self.logger = logger
        self.maxEventBytes = configuration.maxEventBytes
        let projector = ActivityProjector(logger: logger)
        var storeConfiguration = configuration.store
        let readOnly = storeConfiguration.readOnly
        if !readOnly { storeConfiguration.projector = projector }
        // A file holding only API keys (created before the first append) is a ledger to be; anything else with
        // tables but none of our migrations is refused, never adopted.
        storeConfiguration.companionMigrations = Set(LedgerSchema.identifiers).union(APIKeyStore.identifiers)
        do {
            store = try EventStore(path: path, configuration: storeConfiguration, logger: logger)
        } catch let error as StoreError {
            throw LedgerError(.storage, error.message, cause: error)
        }
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
    func catchUp() throws {
        try store.pool.writeWithoutTransaction { db in
            let done = try Int64.fetchOne(
                db, sql: "SELECT position FROM projection_positions WHERE name = ?", arguments: [ActivityProjector.name]
            ) ?? 0
            let last = try store.lastPosition(in: db)
            guard done < last else { return }
            logger.info("projections behind the log: catching up", metadata: [
                "ledger.projection.position": "\(done)", "ledger.log.position": "\(last)",
            ])
            try db.inTransaction {
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
