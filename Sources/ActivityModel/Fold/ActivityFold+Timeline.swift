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
    /// request are skipped (there is no activity yet). Quadratic in the number of events, fine for one activity.
    public static func timeline(activity: String, events: [PositionedEvent], from: Instant? = nil, to: Instant)
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
