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

    /// Appends a batch in its own savepoint; a failing batch leaves nothing behind and throws.
    public func append(_ batch: AppendBatch) throws -> AppendResult {
        let result = try writer.append(batch, db: db, state: &state)
        writer.context.trainIfDue(db, nextPosition: state.lastPosition + 1, logger: logger)
        return result
    }
}

@available(*, unavailable)
extension ImportSession: Sendable {}
