import GRDB

/// Updates read models inside the append transaction.
///
/// Runs in the same transaction (and savepoint) as the rows of one append batch, with the events newly
/// written in position order (duplicates excluded). Throwing rolls back that batch only and fails its
/// append call; other batches committed in the same group are unaffected.
public protocol InlineProjector: Sendable {
    func apply(_ events: [RecordedEvent], db: Database) throws
}
