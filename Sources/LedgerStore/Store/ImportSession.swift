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
        } catch {
            failed = true
            throw error
        }
        writer.context.trainIfDue(db, nextPosition: state.lastPosition + 1, logger: logger)
        return result
    }
}

@available(*, unavailable)
extension ImportSession: Sendable {}
