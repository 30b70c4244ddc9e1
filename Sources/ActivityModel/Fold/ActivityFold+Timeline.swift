/// One step of an activity's timeline: an event and the state right after it.
public struct TimelineEntry: Hashable, Sendable {
    public var event: PositionedEvent
    /// The activity as of the event's `at`, counting events up to and including this one in (`at`, position)
    /// order (a later event with the same `at` is not yet applied).
    public var state: ActivityState

    public init(event: PositionedEvent, state: ActivityState) {
        self.event = event
        self.state = state
    }
}

extension ActivityFold {
    /// SPEC §7 `timeline`: the activity's events (own stream and channel events that reached it) with
    /// `from` ≤ `at` ≤ `to`, each with the phase and displayed content right after it. Events before the
    /// request are skipped (there is no activity yet).
    ///
    /// One pass: the walk takes the events one at a time and is read after each, which gives exactly what
    /// folding each prefix as of its last event's `at` gives (`timelineByRefolding`, kept as the test oracle),
    /// because the deadlines a walk applies depend only on what it has seen, never on when they were applied.
    public static func timeline(activity: String, events: [PositionedEvent], from: Instant? = nil, to: Instant)
        -> [TimelineEntry]
    {
        walkTimeline(activity: activity, events: events, from: from, to: to) {
            TimelineEntry(event: $0, state: $1.state())
        }
    }

    /// `timeline` with each entry's card instead of its whole state (`ActivityCard`: what the timeline and the
    /// incident view show of it), so that an entry copies no token history or channels.
    public static func timelineCards(activity: String, events: [PositionedEvent], from: Instant? = nil, to: Instant)
        -> [(event: PositionedEvent, card: ActivityCard)]
    {
        walkTimeline(activity: activity, events: events, from: from, to: to) { ($0, $1.card()) }
    }

    /// The one pass of `timeline`, reading each entry with `read`.
    private static func walkTimeline<Entry>(
        activity: String, events: [PositionedEvent], from: Instant?, to: Instant,
        read: (PositionedEvent, ActivityTimeline) -> Entry
    ) -> [Entry] {
        let ordered = ActivityTimeline.ordered(events, asOf: to)
        guard let request = ActivityTimeline.request(of: activity, in: ordered) else { return [] }
        var walk = ActivityTimeline(
            activity: activity, request: request.event, data: request.data, asOf: request.event.event.at)
        walk.tracksDisplayed = true
        var entries: [Entry] = []
        for (index, event) in ordered.enumerated() {
            if ActivityTimeline.isRelevant(event.event, activity: activity) { walk.append(event) }
            guard index >= request.index else { continue }
            if let from, event.event.at < from { continue }
            let own = event.event.stream == .activity(activity)
            if !own {
                guard event.event.stream.kind == .channel, walk.isSubscribed(to: event.event.stream.id) else { continue }
                if case .subscribe(let s) = event.event.data, s.activity != activity { continue }
            }
            walk.settle(asOf: event.event.at)
            walk.rememberDisplayed()
            entries.append(read(event, walk))
        }
        return entries
    }

    /// The definition `timeline` must match: each prefix folded from scratch (quadratic; tests only).
    static func timelineByRefolding(activity: String, events: [PositionedEvent], from: Instant? = nil, to: Instant)
        -> [TimelineEntry]
    {
        let ordered = events.filter { $0.event.at <= to }.sorted {
            ($0.event.at, $0.position) < ($1.event.at, $1.position)
        }
        var entries: [TimelineEntry] = []
        for (index, event) in ordered.enumerated() {
            if let from, event.event.at < from { continue }
            let prefix = Array(ordered[...index])
            guard let state = try? state(activity: activity, events: prefix, asOf: event.event.at) else { continue }
            let own = event.event.stream == .activity(activity)
            let reached = !own && state.channels.contains(event.event.stream.id) && event.event.stream.kind == .channel
            guard own || reached else { continue }
            if reached, case .subscribe(let s) = event.event.data, s.activity != activity { continue }
            entries.append(TimelineEntry(event: event, state: state))
        }
        return entries
    }
}

extension ActivityFold {
    /// The activity as of each of `times` (ascending), in one walk: the state at `times[i]` equals
    /// `state(activity:events:asOf: times[i])`, nil where it has no request at or before that time.
    ///
    /// The incident report uses it to precompute the Lock Screen card at every moment it can change.
    public static func states(activity: String, events: [PositionedEvent], at times: [Instant]) -> [ActivityState?] {
        walkMoments(activity: activity, events: events, at: times) { $0.state() }
    }

    /// The one walk of `states`, reading the activity at each time with `read`.
    private static func walkMoments<Moment>(
        activity: String, events: [PositionedEvent], at times: [Instant], read: (ActivityTimeline) -> Moment
    ) -> [Moment?] {
        guard let last = times.last else { return [] }
        let ordered = ActivityTimeline.ordered(events, asOf: last)
        guard let request = ActivityTimeline.request(of: activity, in: ordered) else { return times.map { _ in nil } }
        var walk = ActivityTimeline(
            activity: activity, request: request.event, data: request.data, asOf: request.event.event.at)
        walk.tracksDisplayed = true
        var next = 0
        var moments: [Moment?] = []
        moments.reserveCapacity(times.count)
        for time in times {
            while next < ordered.count, ordered[next].event.at <= time {
                if ActivityTimeline.isRelevant(ordered[next].event, activity: activity) { walk.append(ordered[next]) }
                next += 1
            }
            guard next > request.index else {
                moments.append(nil)
                continue
            }
            walk.settle(asOf: time)
            walk.rememberDisplayed()
            moments.append(read(walk))
        }
        return moments
    }

    /// The activity's card at every moment in [`from`, `to`] where it can change: `from`, each event's `at`, and
    /// each deadline a card names (`ActivityCard.deadlines`), ascending. Between two of them nothing on the card
    /// changes, so the card as of any T in the window is the last one at or before T, with `asOf` T (a property
    /// test holds this against `state(activity:events:asOf:)`). Moments before the request are left out.
    public static func cards(activity: String, events: [PositionedEvent], from: Instant, to: Instant) -> [ActivityCard] {
        var moments = Set([from, to] + events.lazy.map(\.event.at).filter { $0 >= from && $0 <= to })
        var cards: [ActivityCard] = []
        // A deadline's own card names no deadline its walk has not: this ends after a pass or two (the deadlines
        // come from a finite set: the contents' stale dates, the start, the ends and the deaths the events give).
        for _ in 0..<16 {
            cards = walkMoments(activity: activity, events: events, at: moments.sorted()) { $0.card() }
                .compactMap { $0 }
            let named = cards.flatMap(\.deadlines).filter { $0 > from && $0 <= to && !moments.contains($0) }
            if named.isEmpty { break }
            moments.formUnion(named)
        }
        return cards
    }
}
