/// SPEC §3: an activity's state as of any time T, folded from its events.
///
/// `events` holds every event of the activity's stream plus the events of channel streams it may be subscribed
/// to (channel update/end/push/subscribe), in any order. Events with `at` ≤ asOf count, in (`at`, position)
/// order; phases that follow from time (stale, 8 h system end, dismissal deadlines, 12 h cap) are derived for
/// asOf, so a replay as of any past T is exact.
public enum ActivityFold: Sendable {
    /// - Throws: `NoSuchActivity` when the activity has no `request` at or before `asOf`.
    public static func state(activity: String, events: [PositionedEvent], asOf: Instant) throws(NoSuchActivity)
        -> ActivityState
    {
        let timeline = try ActivityTimeline(activity: activity, events: events, asOf: asOf)
        return timeline.state()
    }
}

extension ActivityTimeline {
    /// The phase as of `asOf` with `displayed` on the screen.
    func phase(displayed: ContentSnapshot?) -> Phase {
        if removedAt != nil { return .dismissed }
        if endedAt != nil { return .ended }
        if asOf < startsAt { return .pending }
        if let stale = displayed?.staleDate, stale <= asOf { return .stale }
        return .active
    }

    /// When it will leave the screen if nothing else happens: the removal deadline while it has not left.
    var pendingRemovalDeadline: Instant? { removedAt == nil ? removalDeadline : nil }

    /// `ActivityCard(state())` without the token history and channels a whole state copies.
    func card() -> ActivityCard {
        let displayed = displayed()
        return ActivityCard(
            asOf: asOf, phase: phase(displayed: displayed), endedBy: endedBy, dismissedBy: dismissedBy,
            displayed: displayed, token: tokens.last?.token, tokenDeadFrom: tokens.last.flatMap { deaths[$0.token] },
            events: ownEvents, lastPosition: lastPosition, startsAt: startsAt, endedAt: endedAt, removedAt: removedAt,
            removalDeadline: pendingRemovalDeadline)
    }

    func state() -> ActivityState {
        let displayed = displayed()
        let phase = phase(displayed: displayed)
        let history = tokens.map { record in
            var record = record
            record.deadFrom = deaths[record.token]
            return record
        }
        return ActivityState(
            activity: activity, asOf: asOf, phase: phase, endedBy: endedBy, dismissedBy: dismissedBy,
            attributesType: request.attributesType, attributes: request.attributes, displayed: displayed,
            intended: intended, token: tokens.last?.token, events: ownEvents, lastPosition: lastPosition,
            requestedAt: requestEvent.event.at, startsAt: startsAt, endedAt: endedAt, removedAt: removedAt,
            removalDeadline: pendingRemovalDeadline, staleDate: displayed?.staleDate,
            pushType: request.pushType, style: request.style, origin: request.origin,
            installation: request.installation, channels: channels, tokenHistory: history, counters: counters,
            firstEvent: firstEvent, lastEvent: lastEvent)
    }
}
