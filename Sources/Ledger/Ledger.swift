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
        if !storeConfiguration.readOnly { storeConfiguration.projector = projector }
        do {
            store = try EventStore(path: path, configuration: storeConfiguration, logger: logger)
        } catch let error as StoreError {
            throw LedgerError(.storage, "cannot open ledger \(path): \(error)")
        }
        self.projector = projector
        if !storeConfiguration.readOnly {
            try LedgerSchema.migrate(store.pool)
            try catchUp()
        }
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
                try store.forEachEvent(in: db, after: done) { event in
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
