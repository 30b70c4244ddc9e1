/// The event-time walk behind `ActivityFold` and `DeliveryVerdicts`: one pass over an activity's events in
/// (`at`, position) order with the time-derived transitions (8 h system end, dismissal deadlines) applied
/// before each event whose `at` reaches them, so that ties go to the deadline as SPEC §4 requires.
struct ActivityTimeline {
    /// An update or end that reached this activity (own stream or a subscribed channel).
    ///
    /// The walk's records of an event keep its walk index (`events[index]`) and the few fields they are asked for,
    /// not a copy of the event: a copy retained every string of it (and a push's strings twice, with its `data`),
    /// ~5 % of a `state --at` in retains and releases.
    struct Recorded {
        var index: Int
        var at: Instant
        var position: Int64
        var id: String
        var type: EventType
        var timestamp: Int64
        var content: ActivityContent?
        var viaChannel: String?
        /// Own rejection, decided when it was recorded: payloadTooLarge, futureTimestamp or afterEnd.
        var ownRejection: String?
        /// A server update to a token activity whose current token was dead when it was recorded.
        var deadTokenAtRecord: Bool
        /// Whether it ended the activity.
        var endedActivity: Bool
    }

    struct Observation {
        var index: Int
        var data: ObserveData
    }

    struct Push {
        var index: Int
        var at: Instant
        var position: Int64
        var data: PushData
        /// The token it went to (its own `token`, else the activity's token current at the push).
        var token: String?
        /// It went to a token that a newer `token` event had already replaced (SPEC §1: flagged).
        var toSupersededToken: Bool
    }

    let activity: String
    /// The walk's clock (`settle(asOf:)` moves it forward for the incremental timeline).
    var asOf: Instant
    /// Relevant events with `at` ≤ asOf, in (at, position) order.
    var events: [PositionedEvent] = []
    var request: RequestData
    /// The request's content is over the size limit (never displayed); computed once, it is asked per entry.
    let requestTooLarge: Bool
    var requestEvent: PositionedEvent
    /// Walk index of the request.
    var requestIndex = 0
    var startsAt: Instant
    var systemEnd: Instant { startsAt.adding(hours: 8) }
    var cap: Instant { startsAt.adding(hours: 12) }

    var endedAt: Instant?
    var endedBy: EndedBy?
    var removedAt: Instant?
    var dismissedBy: DismissedBy?
    /// Policy deadline after the end, and who is named when it passes.
    var removalDeadline: Instant?
    var removalBy: DismissedBy?
    /// First moment the activity was over (ended or removed) and the index of the event that did it.
    var overAt: Instant?
    var overIndex = -1

    var deliveries: [Recorded] = []
    /// Set before the first event by the walks that read the state after every event (`ActivityFold.timeline`,
    /// `states`): they keep `eligible` and what is displayed as they go. A fold read once (state, nightly, resync)
    /// does not pay for that bookkeeping.
    var tracksDisplayed = false
    /// With `tracksDisplayed`, `eligible[d]` is `isCandidate(d, before: .max)`, kept as the walk goes, so that the
    /// displayed content after each event costs no attempt lookups (a timeline reads it once per event: 10k events
    /// took 43 s in a debug build, 4.4 s in release).
    var eligible: [Bool] = []
    /// Indices in `deliveries` by event id.
    var deliveriesByID: [String: [Int]] = [:]
    /// With `tracksDisplayed`: the timestamp of each delivery that is `eligible` (slot `d`), so that what is
    /// displayed after an observation is found without a pass over every candidate (`displayedNow()`; a
    /// timeline of 30,000 updates each observed took 27 s when every observation rebuilt the candidates).
    var eligibleTimestamps = ExtremaTree(count: 0)
    /// With `tracksDisplayed`: deliveries with content, by their timestamp, in walk order.
    var contentsByTimestamp: [Int64: [Int]] = [:]
    /// Per delivery of a finished walk, the walk index of its first attempt and of its first successful one
    /// (Int.max for none): the verdicts ask what was displayed before each delivery, and with it that costs no
    /// attempt lookups (a 5k-update audit took 2.4 s without it).
    struct AttemptIndex {
        var first: [Int]
        var firstSuccess: [Int]
    }
    var attemptIndex: AttemptIndex?
    /// What `displayed()` shows after everything walked, when `shownIsKnown`: kept by the walks that read the
    /// state after every event (`rememberDisplayed()`), updated in O(1) when an update or end is appended and
    /// forgotten when anything else it depends on changes (an observation, an attempt that changes a delivery's
    /// eligibility, the request's attempts, the end, a token's death).
    var shownIsKnown = false
    var shownCandidate: Candidate?
    var observations: [Observation] = []
    /// Position in `observations` of the last one that names a content timestamp.
    var lastShowing: Int?
    var pushes: [Push] = []
    /// Pushes by the event id they carried, in walk order: indices in `pushes` (a second copy of each push cost
    /// ~7 % of a fold).
    var pushesByRef: [String: [Int]] = [:]
    /// With `tracksDisplayed`: per attempted event, what its best attempt as of everything walked follows from
    /// (`currentBest`, equal to `bestOutcome(carryingEnd:id:before: .max)`): how many of its attempts succeed and
    /// which is the newest. A push adds to its own event's tally; a token that died earlier than known takes away
    /// the successes of its attempts between the two deaths (`pushesByToken` finds them; each attempt is in at most
    /// one such range). Without it every push re-read every earlier attempt of its event, and every earlier death
    /// every attempt: a timeline of three updates pushed 20,000 times each took 76 s, of 20,000 410s each dating
    /// the death a millisecond earlier 45 s.
    var attemptTallies: [String: AttemptTally] = [:]
    /// With `tracksDisplayed`: indices in `pushes` by the token each push went to, in walk order (so by `at`).
    var pushesByToken: [String: [Int]] = [:]
    var tokens: [TokenRecord] = []
    /// Token → time from which it is dead (earliest 410 seen so far).
    var deaths: [String: Instant] = [:]
    /// Push event id → it is the 410 that killed its token (it keeps its APNs reason).
    var killers: Set<Int64> = []
    var channels: [String] = []
    var intended: ContentSnapshot?
    var counters = Counters()
    var ownEvents = 0
    var lastPosition: Int64 = 0
    var firstEvent: String?
    var lastEvent: String?

    static func eventID(_ event: PositionedEvent) -> String { event.event.id ?? "#\(event.position)" }

    /// The id of the event at walk index `index`.
    func eventID(at index: Int) -> String { Self.eventID(events[index]) }

    static func ordered(_ events: [PositionedEvent], asOf: Instant) -> [PositionedEvent] {
        var kept = events.filter { $0.event.at <= asOf }
        if !isInWalkOrder(kept) { kept.sort(by: Self.walkOrder) }  // in place: no second copy of every event
        return kept
    }

    /// Whether `events` are already in walk order: a stream's events read in version order nearly always are,
    /// and checking costs no copies where sorting moved every event (~10 % of a fold of 100 events).
    static func isInWalkOrder(_ events: [PositionedEvent]) -> Bool {
        for index in events.indices.dropFirst() where walkOrder(events[index], events[index - 1]) { return false }
        return true
    }

    /// (`at`, position) order.
    static func walkOrder(_ a: PositionedEvent, _ b: PositionedEvent) -> Bool {
        (a.event.at, a.position) < (b.event.at, b.position)
    }

    init(activity: String, events unordered: [PositionedEvent], asOf: Instant) throws(NoSuchActivity) {
        // One filtered copy, sorted: the request is on the activity's own stream, so among the relevant events.
        var relevant = unordered.filter { $0.event.at <= asOf && Self.isRelevant($0.event, activity: activity) }
        if !Self.isInWalkOrder(relevant) { relevant.sort(by: Self.walkOrder) }
        guard let found = Self.request(of: activity, in: relevant) else {
            throw NoSuchActivity(activity: activity, asOf: asOf)
        }
        self.init(activity: activity, request: found.event, data: found.data, asOf: asOf)
        events = relevant
        walk()
    }

    /// A walk that has seen no event yet; `append(_:)` feeds it (the request must be among what it is fed).
    init(activity: String, request requestEvent: PositionedEvent, data request: RequestData, asOf: Instant) {
        self.activity = activity
        self.asOf = asOf
        self.request = request
        self.requestTooLarge = request.content.isTooLarge
        self.requestEvent = requestEvent
        self.startsAt = max(requestEvent.event.at, request.scheduledStart ?? requestEvent.event.at)
    }

    /// The activity's first request in `ordered` (events already in (`at`, position) order), with its index.
    static func request(of activity: String, in ordered: [PositionedEvent])
        -> (index: Int, event: PositionedEvent, data: RequestData)?
    {
        for (index, e) in ordered.enumerated() where e.event.stream.kind == .activity && e.event.stream.id == activity {
            if case .request(let r) = e.event.data { return (index, e, r) }
        }
        return nil
    }

    static func isRelevant(_ event: LedgerEvent, activity: String) -> Bool {
        switch event.stream.kind {
        case .activity: return event.stream.id == activity
        case .channel:
            switch event.data {
            case .update, .end, .push, .subscribe: return true
            default: return false
            }
        case .installation: return false
        }
    }

    /// Applies the time-derived transitions that happen at or before `time`.
    mutating func advance(to time: Instant) {
        if endedAt == nil, removedAt == nil, time >= systemEnd {
            end(at: systemEnd, by: .system, policy: .default)
        }
        if removedAt == nil, let deadline = removalDeadline, time >= deadline {
            markOver(at: deadline, index: -1)
            removedAt = deadline
            dismissedBy = removalBy
        }
    }

    mutating func end(at time: Instant, by: EndedBy, policy: DismissalPolicy) {
        markOver(at: time, index: -1)
        endedAt = time
        endedBy = by
        let policyDeadline: Instant =
            switch policy {
            case .default: time.adding(hours: 4)
            case .immediate: time
            case .after(let date): min(max(date, time), time.adding(hours: 4))
            }
        if cap < policyDeadline {
            removalDeadline = cap
            removalBy = .system
        } else {
            removalDeadline = policyDeadline
            removalBy = .policy
        }
        advance(to: time)
    }

    var isOver: Bool { endedAt != nil || removedAt != nil }

    /// The token current at `time` (newest token event at or before it, in walk order).
    func currentToken(at time: Instant) -> TokenRecord? { tokens.last { $0.at <= time } }

    /// Whether `token` is dead at `time` (a 410 recorded so far with a death time at or before it).
    func deathTime(of token: String) -> Instant? { deaths[token] }

    var isTokenActivity: Bool {
        if case .token? = request.pushType { return true }
        return !tokens.isEmpty
    }

    func isSubscribed(to channel: String) -> Bool { channels.contains(channel) }
}
