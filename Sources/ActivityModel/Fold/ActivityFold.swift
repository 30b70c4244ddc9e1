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
    func state() -> ActivityState {
        let displayed = displayed()
        let phase: Phase
        if removedAt != nil {
            phase = .dismissed
        } else if endedAt != nil {
            phase = .ended
        } else if asOf < startsAt {
            phase = .pending
        } else if let stale = displayed?.staleDate, stale <= asOf {
            phase = .stale
        } else {
            phase = .active
        }
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
            removalDeadline: removedAt == nil ? removalDeadline : nil, staleDate: displayed?.staleDate,
            pushType: request.pushType, style: request.style, origin: request.origin,
            installation: request.installation, channels: channels, tokenHistory: history, counters: counters,
            firstEvent: firstEvent, lastEvent: lastEvent)
    }
}
