/// An activity as of a time T (SPEC §3), the result of `ActivityFold.state`.
///
/// Encodes exactly the SPEC §7 `state` JSON (nulls written as null) plus the extra fields below.
public struct ActivityState: Hashable, Sendable {
    public var activity: String
    public var asOf: Instant
    public var phase: Phase
    public var endedBy: EndedBy?
    public var dismissedBy: DismissedBy?
    public var attributesType: String
    public var attributes: JSONValue
    /// What the Lock Screen shows by the ledger's best knowledge.
    public var displayed: ContentSnapshot?
    /// The last content recorded in `at` order, whatever its timestamp or verdict.
    public var intended: ContentSnapshot?
    /// The newest token at or before T, even when dead.
    public var token: String?
    /// Events of the activity's own stream with `at` ≤ asOf.
    public var events: Int
    /// Highest log position among those events.
    public var lastPosition: Int64

    // Extra fields.
    /// The request's `at`.
    public var requestedAt: Instant
    /// When it started or starts: the scheduled start if later than the request, else the request's `at`.
    public var startsAt: Instant
    public var endedAt: Instant?
    /// When it left the screen (a dismissal, or the dismissal policy / 12 h cap deadline that passed).
    public var removedAt: Instant?
    /// When it will leave the screen if nothing else happens (ended, not yet removed).
    public var removalDeadline: Instant?
    /// Stale date of the displayed content.
    public var staleDate: Instant?
    public var pushType: PushType?
    public var style: ActivityStyle?
    public var origin: RequestOrigin?
    public var installation: String?
    /// Channels it is subscribed to at T, in subscription order.
    public var channels: [String]
    public var tokenHistory: [TokenRecord]
    public var counters: Counters
    public var firstEvent: String?
    public var lastEvent: String?

    /// Whether the newest token is dead (a 410 at or before T).
    public var tokenIsDead: Bool { tokenHistory.last?.deadFrom.map { $0 <= asOf } ?? false }
}

/// One token of an activity's history.
public struct TokenRecord: Hashable, Sendable {
    public var token: String
    public var at: Instant
    public var environment: APNsEnvironment?
    /// From a 410: dead from this time on.
    public var deadFrom: Instant?
    public var event: String?

    public init(token: String, at: Instant, environment: APNsEnvironment?, deadFrom: Instant?, event: String?) {
        self.token = token
        self.at = at
        self.environment = environment
        self.deadFrom = deadFrom
        self.event = event
    }
}

/// Event counts of an activity as of T (own stream plus channel updates/ends that reached it).
public struct Counters: Hashable, Sendable {
    public var updates = 0
    public var ends = 0
    public var pushes = 0
    public var failedPushes = 0
    public var observations = 0
    public var tokens = 0
    public var dismissals = 0
    public var reconciles = 0
    public var channelUpdates = 0
    /// Pushes sent to a token that a newer token had already replaced.
    public var pushesToSupersededToken = 0

    public init() {}
}

/// `state`/`audit` of an activity with no `request` at or before T.
public struct NoSuchActivity: Error, Hashable, Sendable, CustomStringConvertible {
    public var activity: String
    public var asOf: Instant

    public init(activity: String, asOf: Instant) {
        self.activity = activity
        self.asOf = asOf
    }

    public var description: String { "no such activity at \(asOf.rfc3339): \(activity)" }
}
