/// What the incident view shows of an activity at one moment (its Lock Screen card) and what says when that may
/// change without a new event: the part of an `ActivityState` that `ActivityFold.cards` and `timelineCards` keep for
/// each moment. A whole state per moment held the token history and the channels, so an activity that rotated its
/// token 20,000 times made each moment copy 20,000 records: one incident report passed 19 GB before it was stopped.
public struct ActivityCard: Hashable, Sendable {
    public var asOf: Instant
    public var phase: Phase
    public var endedBy: EndedBy?
    public var dismissedBy: DismissedBy?
    public var displayed: ContentSnapshot?
    /// The newest token at or before `asOf`, even when dead, and the time it is dead from (nil: not known dead).
    public var token: String?
    public var tokenDeadFrom: Instant?
    public var events: Int
    public var lastPosition: Int64
    public var startsAt: Instant
    public var endedAt: Instant?
    public var removedAt: Instant?
    public var removalDeadline: Instant?

    /// Stale date of the displayed content.
    public var staleDate: Instant? { displayed?.staleDate }
    /// Whether the newest token is dead (a 410 at or before `asOf`), as `ActivityState.tokenIsDead`.
    public var tokenIsDead: Bool { tokenDeadFrom.map { $0 <= asOf } ?? false }

    /// The card of a whole state.
    public init(_ state: ActivityState) {
        self.init(
            asOf: state.asOf, phase: state.phase, endedBy: state.endedBy, dismissedBy: state.dismissedBy,
            displayed: state.displayed, token: state.token, tokenDeadFrom: state.tokenHistory.last?.deadFrom,
            events: state.events, lastPosition: state.lastPosition, startsAt: state.startsAt, endedAt: state.endedAt,
            removedAt: state.removedAt, removalDeadline: state.removalDeadline)
    }

    init(
        asOf: Instant, phase: Phase, endedBy: EndedBy?, dismissedBy: DismissedBy?, displayed: ContentSnapshot?,
        token: String?, tokenDeadFrom: Instant?, events: Int, lastPosition: Int64, startsAt: Instant,
        endedAt: Instant?, removedAt: Instant?, removalDeadline: Instant?
    ) {
        self.asOf = asOf
        self.phase = phase
        self.endedBy = endedBy
        self.dismissedBy = dismissedBy
        self.displayed = displayed
        self.token = token
        self.tokenDeadFrom = tokenDeadFrom
        self.events = events
        self.lastPosition = lastPosition
        self.startsAt = startsAt
        self.endedAt = endedAt
        self.removedAt = removedAt
        self.removalDeadline = removalDeadline
    }

    /// The moments after which the card may show something else without a new event: the start, the stale date,
    /// the 8 h system end, the 12 h cap, the end, the removal deadline and the newest token's death.
    public var deadlines: [Instant] {
        var times = [startsAt, startsAt.adding(hours: 8), startsAt.adding(hours: 12)]
        for time in [staleDate, endedAt, removedAt, removalDeadline, tokenDeadFrom] {
            if let time { times.append(time) }
        }
        return times
    }
}
