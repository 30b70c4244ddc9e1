import GRDB

/// Updates read models inside the append transaction.
///
/// Runs in the same transaction (and savepoint) as the rows of one append batch, with the events newly
/// written in position order (duplicates excluded). Throwing rolls back that batch only and fails its
/// append call; other batches committed in the same group are unaffected.
public protocol InlineProjector: Sendable {
    /// `inputs` runs parallel to `events` (`inputs[k]` is the input of the slice's k-th event): what the appender
    /// attached to the `NewEvent` each was written from (`NewEvent.projectorInput`; `.empty` where it attached
    /// nothing). A slice: an import that seals lends the events it holds.
    func apply(_ events: ArraySlice<RecordedEvent>, inputs: [ProjectorInput], db: Database) throws
}

extension InlineProjector {
    public func apply(_ events: [RecordedEvent], inputs: [ProjectorInput], db: Database) throws {
        try apply(events[...], inputs: inputs, db: db)
    }

    /// Applies events read back from the log (a rebuild, a catch-up), which carry no input.
    public func apply(_ events: [RecordedEvent], db: Database) throws {
        try apply(events, inputs: Array(repeating: .empty, count: events.count), db: db)
    }
}

/// What an appender hands the inline projector along with one event — the event as the appender already decoded
/// it — so that the projector does not parse the payload a second time on the writer.
///
/// The store never looks inside and never stores it; it travels on the `NewEvent` and reaches the projector with
/// the row written from that event. A duplicate (its id already stored) or a failed batch writes no row, so its
/// input simply goes away with the batch: there is nothing to key, look up or withdraw.
///
/// Not part of the event's identity: all inputs compare equal, so two `NewEvent`s that differ only in their
/// inputs are equal. A class instance is carried in the existential as a reference, without a box.
public struct ProjectorInput: Sendable, Hashable {
    /// Nothing attached: the projector reads the payload.
    public static let empty = ProjectorInput(nil)

    public let value: (any Sendable)?

    public init(_ value: (any Sendable)?) { self.value = value }

    public static func == (lhs: ProjectorInput, rhs: ProjectorInput) -> Bool { true }
    public func hash(into hasher: inout Hasher) {}
}
