import Foundation
import GRDB
import GRDBSQLite
import Logging
import Synchronization

/// The generic event log: one SQLite file (WAL) of gapless, hash-chained, zstd-compressed events.
///
/// - Appends go through group commit (`append`): concurrent callers share transactions, each batch in its
///   own savepoint, and a call returns once its transaction is durable.
/// - The inline projector, if any, runs inside each batch's savepoint. Pass it in
///   `StoreConfiguration.projector` or set it later with `setProjector(_:)`.
/// - `run()` (the store is a ServiceLifecycle `Service`) only waits for graceful shutdown and drains the
///   writer; appends work without it.
public final class EventStore: Sendable {
    /// The pool the store writes through; the integrator runs its own migrations and queries on it.
    public let pool: DatabasePool
    public let configuration: StoreConfiguration
    /// The file, as given to `init`.
    public let path: String
    let logger: Logger
    let decoders = DecoderPool { PayloadDecoder() }
    let segmentHashes = SegmentHashes()
    let writer: WriterContext
    let queue = CommitQueue()
    /// Compressors for appenders, so each compresses its own batch on its own thread (see `precompressed`).
    let precompressors: HandlePool<PayloadPrecompressor>
    private let projector: Mutex<(any InlineProjector)?>
    /// Checkpoints beside the writer; nil when read-only.
    private let checkpointer: WALCheckpointer?

    /// Opens (creating if needed, unless read-only) the store at `path` and migrates its schema.
    public init(path: String, configuration: StoreConfiguration = .init(), logger: Logger) throws {
        self.configuration = configuration
        self.path = path
        self.logger = logger
        let writer = WriterContext(configuration: configuration)
        self.writer = writer
        let level = configuration.compressionLevel
        precompressors = HandlePool { PayloadPrecompressor(board: writer.board, level: level) }
        projector = Mutex(configuration.projector)
        var config = Self.connectionConfiguration(configuration)
        let readOnly = configuration.readOnly
        let synchronous = configuration.durability.rawValue.uppercased()
        let cacheKiB = configuration.cacheKiB
        let readerCacheKiB = configuration.readerCacheKiB
        let readerMapBytes = configuration.readerMapBytes
        let checkpointer = readOnly ? nil : WALCheckpointer(
            path: path, synchronous: synchronous,
            thresholds: .init(
                start: configuration.checkpointFrames, catchUp: configuration.checkpointCatchUpFrames,
                limit: configuration.checkpointLimitFrames))
        self.checkpointer = checkpointer
        config.prepareDatabase { db in
            // GRDB opens readers read-only; the one writer connection gets the hook. A read-only store sets
            // nothing that would need the schema or a lock beyond what its reads take.
            if db.configuration.readonly {
                try db.execute(sql: "PRAGMA cache_size = -\(readerCacheKiB); PRAGMA mmap_size = \(readerMapBytes)")
            } else {
                try db.execute(sql: "PRAGMA synchronous = \(synchronous); PRAGMA cache_size = -\(cacheKiB)")
                try checkpointer?.install(on: db)
            }
        }
        do {
            if readOnly {
                pool = try Self.openReadOnly(path: path, config: config)
            } else {
                try Self.refuseForeign(path: path, configuration: configuration, config: config)
                pool = try DatabasePool(path: path, configuration: config)
                // GRDB's WAL setup runs after `prepareDatabase` and sets the writer's `synchronous = NORMAL`: a
                // store opened with `durability: .full` committed without syncing the WAL. Its level again.
                try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = \(synchronous)") }
                try Schema.migrator.migrateBesideOthers(pool)
            }
        } catch {
            throw Self.storageError(error, path: path, busyTimeout: configuration.busyTimeout)
        }
    }

    /// A background checkpoint still running would keep the WAL from being folded into the file and removed when
    /// the pool's connections close (`WALCheckpointer.finish`).
    deinit { checkpointer?.finish() }

    /// Folds the WAL into the file and closes the connections, for a process about to exit: then the file alone
    /// holds every commit, whoever still holds the store. Going away (`deinit`) does the same only when the last
    /// reference goes, which a command's thread-pool job could still hold as the process exited (found: `seal`
    /// left a 6 MB `-wal` beside the file in 3–5 runs of 10). Later use of the store fails; a read-only store is
    /// only closed. Errors are ignored: a reader of another process may keep the WAL, and it stays as it was.
    public func close() {
        if !configuration.readOnly {
            checkpointer?.finish()
            try? pool.writeWithoutTransaction { db in
                // Without waiting: TRUNCATE waits for readers through the busy handler, so another process's read
                // transaction (an `export` being piped) held every writing command's exit for the whole busy
                // timeout. With a reader it copies what it can, as PASSIVE does, and leaves the rest of the WAL.
                sqlite3_busy_timeout(db.sqliteConnection, 0)
                try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
        }
        try? pool.close()
    }

    /// Replaces the inline projector for every later append.
    public func setProjector(_ projector: (any InlineProjector)?) {
        self.projector.withLock { $0 = projector }
    }

    var currentProjector: (any InlineProjector)? { projector.withLock { $0 } }

    /// Appends a batch atomically and returns once its transaction is durable.
    ///
    /// Throws `versionConflict` or `idConflict` (nothing of the batch written), or the projector's error.
    public func append(_ batch: AppendBatch) async throws -> AppendResult {
        if configuration.readOnly { throw StoreError(.readOnly, "the store was opened read-only") }
        let token = queue.makeToken()
        let signal = await withCheckedContinuation { continuation in
            queue.enqueue(
                CommitQueue.Entry(token: token, batch: batch, continuation: continuation),
                refusal: StoreError(.closed, "the store is shutting down"))
        }
        switch signal {
        case .done(let result): return try result.get()
        case .lead: return try await lead(token: token)
        }
    }

    /// Commits the head of the queue (which holds the leader's own batch) and passes the lead on.
    private func lead(token: UInt64) async throws -> AppendResult {
        let group = queue.takeGroup(maximumEvents: configuration.maximumGroupEvents)
        let batches = group.map(\.batch)
        let outcomes: [Result<AppendResult, any Error>]
        do {
            // GRDB's callback API: one hop to the writer queue, and cancelling the leader cannot abort
            // the other callers' commit (the async `write` would throw CancellationError for all of them).
            outcomes = try await withCheckedThrowingContinuation { continuation in
                pool.asyncWriteWithoutTransaction { db in
                    continuation.resume(with: Result { try self.commitTransaction(batches, db: db) })
                }
            }
        } catch {
            await resetWriter()
            let failure = Self.storageError(error, path: path, busyTimeout: configuration.busyTimeout)
            outcomes = group.map { _ in .failure(failure) }
        }
        var mine: Result<AppendResult, any Error> = .failure(StoreError(.closed, "batch lost by the writer"))
        for (entry, outcome) in zip(group, outcomes) {
            if entry.token == token { mine = outcome } else { entry.continuation.resume(returning: .done(outcome)) }
        }
        queue.handOver()
        return try mine.get()
    }

    /// Batches up to this size keep their savepoint's sub-journal in memory (`commitTransaction`).
    static let inMemorySubjournalEvents = 1024

    /// Runs in the writer: one transaction for the group.
    ///
    /// Each batch runs in a savepoint, whose sub-journal keeps the original of every page the batch changes;
    /// past 64 KiB SQLite spills it into a temporary file, and those writes were ~16 % of the writer under HTTP
    /// batches of 100. A group of batches of at most `inMemorySubjournalEvents` events keeps it in memory
    /// (`temp_store=MEMORY`, which SQLite reads when the transaction begins): about 1 MB for a batch of 100
    /// events, a few pages per event at worst, freed at each release. Larger batches spill as before, so memory
    /// stays bounded (measured: with every transaction in memory, 8192-event batches into a 1.75M-event ledger left
    /// the process 30–40 MiB larger). Savepoints are the second try: `commitWithoutSavepoints` comes first.
    private func commitTransaction(_ batches: [AppendBatch], db: Database) throws
        -> [Result<AppendResult, any Error>]
    {
        switch try commitWithoutSavepoints(batches, db: db) {
        case .committed(let outcomes): return outcomes
        // A group of one: its refusal is its outcome (the rollback kept nothing of it, and trained nothing).
        case .refused(let error) where batches.count == 1: return [.failure(error)]
        case .refused: break
        }
        // A batch was refused: the group runs again, each batch in its savepoint. The rolled-back attempt may have
        // installed a dictionary that no longer exists: the writer reloads its state from the file.
        writer.reset()
        let inMemory = batches.allSatisfy { $0.events.count <= Self.inMemorySubjournalEvents }
        try db.cachedStatement(sql: inMemory ? "PRAGMA temp_store = MEMORY" : "PRAGMA temp_store = DEFAULT").execute()
        var outcomes: [Result<AppendResult, any Error>] = []
        try db.inTransaction(.immediate) {
            outcomes = try commit(batches, db: db)
            return .commit
        }
        return outcomes
    }

    /// How a group went without savepoints.
    private enum Attempt {
        case committed([Result<AppendResult, any Error>])
        /// A batch was refused with this error, and the whole transaction rolled back.
        case refused(any Error)
    }

    /// The group in one transaction without savepoints; a refused batch rolls all of it back. Refusals are rare (a
    /// conflict, an invalid event): the common group writes no sub-journal at all, and a group of several with a
    /// refusal pays for its work twice. Session 22: a nightly run's recordings (batches of 2,048 events, alone in
    /// their groups) wrote ~80,000 page copies to a temporary file through their savepoints.
    private func commitWithoutSavepoints(_ batches: [AppendBatch], db: Database) throws -> Attempt {
        var attempt = Attempt.refused(StoreError(.closed, "batch lost by the writer"))
        try db.inTransaction(.immediate) {
            let encoder = try writer.prepare(db)
            var state = try TransactionState.load(db)
            let batchWriter = BatchWriter(
                context: writer, encoder: encoder, projector: currentProjector, reader: reader)
            var results: [Result<AppendResult, any Error>] = []
            results.reserveCapacity(batches.count)
            for batch in batches {
                do {
                    let result = try batchWriter.append(batch, db: db, state: &state, withoutSavepoint: true)
                    results.append(.success(result))
                } catch {
                    attempt = .refused(error)
                    return .rollback
                }
                writer.trainIfDue(db, nextPosition: state.lastPosition + 1, logger: logger)
            }
            try state.saveCounters(db)
            attempt = .committed(results)
            return .commit
        }
        return attempt
    }

    /// Every batch in its savepoint, one transaction for all.
    private func commit(_ batches: [AppendBatch], db: Database) throws -> [Result<AppendResult, any Error>] {
        let encoder = try writer.prepare(db)
        var state = try TransactionState.load(db)
        let batchWriter = BatchWriter(context: writer, encoder: encoder, projector: currentProjector, reader: reader)
        var outcomes: [Result<AppendResult, any Error>] = []
        outcomes.reserveCapacity(batches.count)
        for batch in batches {
            do {
                outcomes.append(.success(try batchWriter.append(batch, db: db, state: &state)))
            } catch {
                outcomes.append(.failure(error))
                continue
            }
            writer.trainIfDue(db, nextPosition: state.lastPosition + 1, logger: logger)
        }
        try state.saveCounters(db)
        return outcomes
    }

    func resetWriter() async {
        _ = try? await pool.writeWithoutTransaction { [writer] _ in writer.reset() }
    }

    /// Runs `body` as one transaction for large imports: if it throws, or any append inside was refused, nothing
    /// written inside is kept. Appends inside go through `ImportSession.append` (projector included) and bypass
    /// group commit.
    ///
    /// With `sealing`, an import into a log with no rows (a new file, or one sealed and purged to its end) writes
    /// whole segments itself as it goes (`ImportSealer`), leaving rows only after the last whole one; without, or
    /// when the log has rows, it writes rows, which `seal` or a `serve` sealing in the background seal later.
    public func importTransaction<T>(sealing: Bool = true, _ body: (ImportSession) throws -> T) async throws -> T {
        if configuration.readOnly { throw StoreError(.readOnly, "the store was opened read-only") }
        do {
            return try importSynchronously(sealing: sealing, body)
        } catch {
            await resetWriter()
            throw Self.storageError(error, path: path, busyTimeout: configuration.busyTimeout)
        }
    }

    /// Synchronous so that GRDB's blocking `write` runs `body` (not Sendable) on the writer connection.
    private func importSynchronously<T>(sealing: Bool, _ body: (ImportSession) throws -> T) throws -> T {
        try pool.write { db in
            let encoder = try writer.prepare(db)
            let state = try TransactionState.load(db)
            var batchWriter = BatchWriter(
                context: writer, encoder: encoder, projector: currentProjector, reader: reader)
            if sealing, try !Self.hasRows(db) {
                batchWriter.sealer = ImportSealer(configuration: configuration, state: state)
            }
            let session = ImportSession(db: db, state: state, writer: batchWriter, logger: logger)
            let result = try body(session)
            // A refused batch left part of itself in the transaction: never commit it, even if the body went on.
            if session.failed { throw StoreError(.invalidEvent, "a batch of this import was refused; nothing is kept") }
            try session.finish()
            try session.state.saveCounters(db)
            return result
        }
    }

    /// Whether `events` has a row (live or dead).
    static func hasRows(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM events)") ?? false
    }

    /// Closes the store to new appends (they throw `closed`) and waits until every queued one is committed.
    public func drain() async {
        await queue.closeAndWait()
    }
}
