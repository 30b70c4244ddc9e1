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
        let ordered = ActivityTimeline.ordered(events, asOf: to)
        guard let request = ActivityTimeline.request(of: activity, in: ordered) else { return [] }
        var walk = ActivityTimeline(
            activity: activity, request: request.event, data: request.data, asOf: request.event.event.at)
        var entries: [TimelineEntry] = []
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
            entries.append(TimelineEntry(event: event, state: walk.state()))
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
