/// SPEC §4: a verdict for every (update or end, activity) pair, with its reason and evidence.
///
/// The first rule that applies wins, in the SPEC order: rejected (payloadTooLarge, futureTimestamp,
/// afterEnd) → applied (own timestamp observed) → superseded → rejected (deadToken or the best attempt's APNs
/// reason) → applied (newer timestamp observed) → lost → accepted → pending.
public enum DeliveryVerdicts: Sendable {
    /// The deliveries of `activity` as of `asOf`, in (`at`, position) order. Empty when the activity has no
    /// request at or before `asOf` (use `deliveries(activity:events:asOf:)` to tell that apart).
    public static func audit(activity: String, events: [PositionedEvent], asOf: Instant) -> [Delivery] {
        (try? deliveries(activity: activity, events: events, asOf: asOf)) ?? []
    }

    /// - Throws: `NoSuchActivity` when the activity has no `request` at or before `asOf`.
    public static func deliveries(activity: String, events: [PositionedEvent], asOf: Instant) throws(NoSuchActivity)
        -> [Delivery]
    {
        var timeline = try ActivityTimeline(activity: activity, events: events, asOf: asOf)
        timeline.indexAttempts()
        let index = ActivityTimeline.VerdictIndex(timeline)
        return timeline.deliveries.indices.map { d in
            timeline.verdict(for: timeline.deliveries[d], facts: index.facts(for: d, in: timeline))
        }
    }
}

extension DeliveryVerdicts {
    /// The verdict of one update/end for one activity (`audit --update`, nightly "undelivered"), or nil when
    /// that event did not reach the activity by `asOf`.
    public static func verdict(of eventID: String, activity: String, events: [PositionedEvent], asOf: Instant)
        -> Delivery?
    {
        guard let timeline = try? ActivityTimeline(activity: activity, events: events, asOf: asOf),
            let recorded = timeline.deliveries.last(where: { $0.id == eventID })
        else { return nil }
        return timeline.verdict(for: recorded)
    }
}

extension ActivityTimeline {
    /// The rules, in the SPEC order, over `facts` (by default computed for this one delivery; `deliveries`
    /// takes them from a `VerdictIndex`).
    func verdict(for delivery: Recorded, facts: VerdictFacts? = nil) -> Delivery {
        let tries = attempts(for: delivery.id)
        var result = Delivery(
            event: delivery.id, type: delivery.type, timestamp: delivery.timestamp, verdict: .pending, reason: nil,
            activity: activity, at: delivery.at, position: delivery.position,
            channel: delivery.viaChannel, pushes: tries.map { eventID(at: $0.index) }, decidingPush: nil,
            observation: nil)
        result.pushesToSupersededToken = tries.filter(\.toSupersededToken).map { eventID(at: $0.index) }
        func decide(_ verdict: Verdict, reason: String? = nil, push: Push? = nil, observation: Observation? = nil)
            -> Delivery
        {
            result.verdict = verdict
            result.reason = reason
            result.decidingPush = push.map { eventID(at: $0.index) }
            result.observation = observation.map { eventID(at: $0.index) }
            return result
        }

        if let rejection = delivery.ownRejection { return decide(.rejected, reason: rejection) }

        let facts = facts ?? self.facts(for: delivery)
        if let own = facts.own { return decide(.applied, observation: own) }

        if let shown = facts.shownBefore, shown > delivery.timestamp { return decide(.superseded) }

        var success: Push?
        var lastFailure: (Push, String)?
        for attempt in tries {
            switch outcome(of: attempt, carrying: delivery) {
            case .success: if success == nil { success = attempt }
            case .failure(let reason): lastFailure = (attempt, reason)
            }
        }
        if success == nil {
            if delivery.deadTokenAtRecord { return decide(.rejected, reason: "deadToken", push: lastFailure?.0) }
            if let (push, reason) = lastFailure { return decide(.rejected, reason: reason, push: push) }
        }

        if let newer = facts.newer { return decide(.applied, observation: newer) }

        if let success {
            if let contradicting = facts.contradicting {
                return decide(.lost, push: success, observation: contradicting)
            }
            return decide(.accepted, push: success)
        }
        return decide(.pending)
    }
}
