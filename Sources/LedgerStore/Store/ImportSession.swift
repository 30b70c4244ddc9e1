import GRDB
import Logging

/// Appends inside `EventStore.importTransaction`. Not Sendable: it is bound to the transaction's connection.
public final class ImportSession {
    /// The import transaction's connection (for the caller's own reads and writes in the same transaction).
    public let db: Database
    var state: TransactionState
    private let writer: BatchWriter
    private let logger: Logger

    init(db: Database, state: TransactionState, writer: BatchWriter, logger: Logger) {
        self.db = db
        self.state = state
        self.writer = writer
        self.logger = logger
    }

    /// Whether an append failed: the transaction then holds part of that batch and can only be rolled back.
    private(set) var failed = false

    /// The last position before the batch being appended (after a failed append, the one before that batch).
    public var lastPosition: Int64 { state.lastPosition }

    /// Appends a batch; throws when it is refused.
    ///
    /// A batch has no savepoint of its own: the import is one transaction, and a refused batch fails all of it
    /// (`EventStore.importTransaction` rolls back whatever the body does after a failed append). A savepoint's
    /// sub-journal copied every index page a batch touched first, ~10 % of a 1M-event import (session 22).
    public func append(_ batch: AppendBatch) throws -> AppendResult {
        guard !failed else { throw StoreError(.invalidEvent, "an earlier batch of this import was refused") }
        let result: AppendResult
        do {
            result = try writer.append(batch, db: db, state: &state, withoutSavepoint: true)
            writer.context.trainIfDue(db, nextPosition: state.lastPosition + 1, logger: logger)
            if let sealer = writer.sealer {
                if writer.encoder.dictionaryID == nil, sealer.waitedForDictionary {
                    writer.context.finishTraining(db, nextPosition: state.lastPosition + 1, logger: logger)
                }
                try sealer.sealIfDue(db, state: &state, dictionaryReady: writer.encoder.dictionaryID != nil)
            }
        } catch {
            failed = true
            throw error
        }
        return result
    }

    /// Events appended and held in memory for the import's next segment (`ImportSealer`): the last ones appended.
    public var heldEvents: Int { writer.sealer?.heldCount ?? 0 }

    /// The event with this id that the log holds, this import's events included (a row, a segment, or an event
    /// held for the import's next segment).
    public func event(id: String) throws -> RecordedEvent? {
        try writer.storedEvent(db, id: id)
    }

    /// Seals and files what the import holds (`ImportSealer.finish`): called once, after the last batch.
    func finish() throws {
        guard let sealer = writer.sealer else { return }
        // An input that ends while the first dictionary trains: its segments wait for it too.
        if writer.encoder.dictionaryID == nil {
            writer.context.finishTraining(db, nextPosition: state.lastPosition + 1, logger: logger)
        }
        try sealer.finish(db, state: &state) { [writer, db] event, stream in
            let stored = try writer.encoder.compress(event.payload)
            try writer.insertRow(event, stream: stream, stored: stored, db: db)
            return stored.count
        }
    }
}

@available(*, unavailable)
extension ImportSession: Sendable {}
