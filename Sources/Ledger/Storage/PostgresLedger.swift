import ActivityModel
import Foundation
import LedgerPostgres
import LedgerStore
import Logging
import NIOPosix
import PostgresNIO
import Synchronization

/// A ledger in a PostgreSQL database (`Schemas/sql/postgresql/`): the log (`PostgresEventLog`) and, in the same
/// database, the projections, API keys and nightly runs. Several processes on one database are one ledger:
///
/// - every append writes its events and the projection rows they change in one statement, only if the log's head is
///   still the one they were planned and read at (`PostgresEventLog.append(_:alongside:)`), so each process's
///   projections see every process's appends, in log order, and commit with them or not at all;
/// - every query runs in one REPEATABLE READ READ ONLY transaction (one snapshot, as a SQLite read transaction),
///   its statements blocking a thread of ``Ledger/readThreads``, never a cooperative one.
final class PostgresLedger: Sendable {
    let log: PostgresEventLog
    let logger: Logger
    /// The database's URL, password included (for connections of other parts: `APIKeyStore`).
    let url: String

    init(log: PostgresEventLog, url: String, logger: Logger) {
        self.log = log
        self.url = url
        self.logger = logger
    }

    var location: String { log.location }

    /// The LISTEN task of ``follow(_:)``, once started.
    private let follower = Mutex<Task<Void, Never>?>(nil)

    /// Signals `signal` at every append of any process on the database, from now until ``close()``: one connection
    /// of the pool LISTENs on `ledger_events` (started once; after a lost connection it listens again a second
    /// later; a feed polls meanwhile).
    func follow(_ signal: AppendSignal) {
        follower.withLock { follower in
            guard follower == nil else { return }
            let log = log
            let logger = logger
            follower = Task {
                while !Task.isCancelled {
                    do {
                        try await log.client.withConnection { connection in
                            try await connection.listen(on: "ledger_events") { notifications in
                                for try await _ in notifications { signal.signal() }
                            }
                        }
                    } catch {
                        guard !Task.isCancelled else { return }
                        logger.warning("lost the LISTEN connection of ledger_events; listening again", metadata: [
                            "ledger.error": "\(error)",
                        ])
                    }
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }

    /// Stops following and closes every connection.
    func close() async {
        let task = follower.withLock { $0 }
        task?.cancel()
        await task?.value
        await log.close()
    }

    /// Runs `query` on one snapshot of the database. Errors of the query itself (a `LedgerError`) pass through;
    /// PostgreSQL failures become one-line storage errors naming the database without its password.
    func read<T: Sendable>(_ query: @escaping @Sendable (any LedgerSnapshot) throws -> T) async throws -> T {
        let location = log.location
        let logger = logger
        let outcome: Result<T, any Error> = try await log.storage {
            try await log.client.withConnection { connection in
                _ = try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger).collect()
                let outcome: Result<T, any Error>
                do {
                    outcome = .success(try await Ledger.readThreads.runIfActive {
                        try query(PostgresSnapshot(connection: connection, logger: logger, location: location))
                    })
                } catch {
                    outcome = .failure(error)
                }
                _ = try await connection.query("COMMIT", logger: logger).collect()
                return outcome
            }
        }
        return try outcome.get()
    }

    /// Appends `batch` and applies it to the projections in the same transaction.
    func append(_ batch: AppendBatch, projector: ActivityProjector) async throws -> AppendResult {
        let logger = logger
        let cache = projectionCache
        return try await log.append(batch) { connection, rows, inputs in
            try await Self.projectionWrite(
                rows, inputs: inputs, projector: projector, connection: connection, cache: cache, logger: logger)
        }
    }

    /// The projection rows this process's appends left (an append planned at the head they are valid at reads
    /// none of them again).
    let projectionCache = PostgresProjectionCache()

    /// The projection rows `rows` change, read through `connection` (or taken from `cache`) and not written yet:
    /// the append's statement writes them with the events (`PostgresEventLog.append(_:alongside:)`). Their reads
    /// block a read thread.
    static func projectionWrite(
        _ rows: [RecordedEvent], inputs: [ProjectorInput], projector: ActivityProjector, connection: PostgresConnection,
        cache: PostgresProjectionCache? = nil, logger: Logger
    ) async throws -> PostgresProjectionWrite {
        let plannedAt = (rows.first?.position ?? 1) - 1
        return try await Ledger.readThreads.runIfActive {
            try projector.apply(
                rows[...], inputs: inputs,
                to: PostgresProjectionRows(
                    connection: connection, logger: logger, deferred: true, cache: cache, plannedAt: plannedAt)
            ).pendingWrite
        }
    }

    /// The position the projections hold, and the log's last.
    ///
    /// One statement, so one snapshot: an append another process commits meanwhile moves both or neither (two
    /// statements could see the head after it and the projections before, and refuse a reader for nothing).
    func positions() async throws -> (projected: Int64, last: Int64) {
        try await log.storage {
            let row = try await log.client.query(
                """
                SELECT coalesce((SELECT position FROM projection_positions WHERE name = \(ActivityProjector.name)), 0),
                       (SELECT position FROM log_head)
                """, logger: logger
            ).collect().first
            return try row?.decode((Int64, Int64).self) ?? (0, 0)
        }
    }

    /// Applies what the projections have not seen yet (a database `copy` filled, or one written by the log alone),
    /// holding the head's lock: no append runs meanwhile. With `fromScratch`, empties the projections first
    /// (`rebuild`). Returns the events applied and the activity rows there are after.
    @discardableResult
    func catchUp(projector: ActivityProjector, fromScratch: Bool = false, progress: (@Sendable (Int64, Int64) -> Void)? = nil)
        async throws -> (events: Int64, activities: Int64)
    {
        let logger = logger
        return try await log.withHeadLocked { connection in
            if fromScratch {
                for table in ProjectionTables.live.names {
                    _ = try await connection.query(PostgresQuery(unsafeSQL: "DELETE FROM \(table)"), logger: logger).collect()
                }
            }
            var done = try await connection.query(
                "SELECT position FROM projection_positions WHERE name = \(ActivityProjector.name)", logger: logger
            ).collect().first?.decode(Int64.self) ?? 0
            let last = try await connection.query("SELECT position FROM log_head", logger: logger)
                .collect().first?.decode(Int64.self) ?? 0
            var applied: Int64 = 0
            while done < last {
                let chunk = try await connection.query(
                    "\(unescaped: PostgresEventLog.selectColumns) WHERE position > \(done) ORDER BY position LIMIT 4096",
                    logger: logger
                ).collect().map(PostgresEventLog.recordedEvent)
                guard let end = chunk.last?.position else { break }
                try await Ledger.readThreads.runIfActive {
                    try projector.apply(chunk[...], to: PostgresProjectionRows(connection: connection, logger: logger))
                }
                applied += Int64(chunk.count)
                done = end
                progress?(applied, last)
            }
            let activities = try await connection.query("SELECT count(*) FROM activities", logger: logger)
                .collect().first?.decode(Int64.self) ?? 0
            return (applied, activities)
        }
    }
}
