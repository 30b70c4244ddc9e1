import ActivityModel

/// The nightly job's decision for one activity, as a pure function of its state as of the run's time, the
/// truth item about it, and (only when needed) its delivery verdicts.
///
/// Drift is defined on canonical JSON (`CanonicalJSON`): the truth `state` equals neither the displayed nor the
/// intended content-state. When it equals the intended content but the device does not show it, the update is
/// in flight (`accepted`/`pending`, no finding) or failed (`undelivered`). Drift and undelivered apply to live
/// activities only (`pending`, `active`, `stale`): an ended activity takes no more updates.
enum NightlyRules {
    struct Facts {
        /// A recorded dismissal or end at or before the run's time (`recordedEnd(state:events:deliveries:)`).
        var recordedEnd: Bool
    }

    /// SPEC §5 "a recorded end or dismissal", as of the state's time: a `dismiss` on its own stream, or an `end`
    /// that reached it (own stream, or a channel it listened to at the time) and that the device acts on. An end
    /// the device drops (oversize, a timestamp over 8 h ahead) ended nothing, so the system end stays unrecorded;
    /// an end after the system end (a late cleanup) is recorded. Deliveries are asked only for channel ends.
    static func recordedEnd(state: ActivityState, events: [PositionedEvent], deliveries: () -> [Delivery]) -> Bool {
        if state.counters.dismissals > 0 { return true }
        var channelEnds: [String: EndData] = [:]
        for positioned in events {
            guard case .end(let end) = positioned.event.data, positioned.event.at <= state.asOf,
                DeviceDrop.reason(end, at: positioned.event.at) == nil
            else { continue }
            if positioned.event.stream.kind == .activity { return true }
            channelEnds[positioned.event.id ?? "#\(positioned.position)"] = end
        }
        guard !channelEnds.isEmpty else { return false }
        return deliveries().contains { $0.type == .end && channelEnds[$0.event] != nil }
    }

    static func evaluate(
        state: ActivityState, truth: TruthSpool.Row?, facts: Facts, at: Instant, deliveries: () -> [Delivery]
    ) -> NightlyEntry? {
        let id = state.activity
        let fresh = freshTimestamp(state, at: at)
        func entry(_ finding: NightlyFinding, _ action: ReconcileAction, _ reason: String, _ payload: JSONValue? = nil)
            -> NightlyEntry
        {
            NightlyEntry(
                finding: finding, action: .init(activity: id, action: action, reason: reason, payload: payload),
                token: state.token, channel: channel(of: state))
        }
        let live = state.phase.isLive

        if let truth, truth.done, live {
            let final = truth.state.map { ActivityContent(state: $0, relevanceScore: state.intended?.relevanceScore) }
                ?? content(state.intended)
            let usable = final.flatMap { $0.isTooLarge ? nil : $0 }
            return entry(
                .leaked, .end, "the truth says done, the activity is still \(state.phase.rawValue)",
                APNsMapping.end(usable, timestamp: fresh, dismissalPolicy: .default))
        }
        if !live, state.endedBy == .system, !facts.recordedEnd {
            let ended = state.endedAt.map { " at \($0.rfc3339)" } ?? ""
            return entry(
                .expired, .cleanup,
                "the system ended it\(ended) (8 h after its start); the ledger has no recorded end or dismissal")
        }
        guard live else { return nil }
        if state.tokenIsDead, let token = state.token {
            let since = state.tokenHistory.last?.deadFrom.map { " since \($0.rfc3339)" } ?? ""
            return entry(
                .deadToken, .rebind,
                "its newest push token \(token.prefix(8))… is dead\(since) and no newer token was reported")
        }
        if let truth, let wanted = truth.state {
            let target = CanonicalJSON.bytes(wanted)
            let intended = state.intended.map { CanonicalJSON.bytes($0.state) }
            let displayed = state.displayed.map { CanonicalJSON.bytes($0.state) }
            if target != intended && target != displayed {
                let staleDate = state.intended?.staleDate.flatMap { $0 > at ? $0 : nil }
                let content = ActivityContent(
                    state: wanted, staleDate: staleDate, relevanceScore: state.intended?.relevanceScore)
                if content.isTooLarge {
                    return entry(.drift, .none, "the truth differs from the content, but is over 4096 bytes: cannot be sent")
                }
                return entry(
                    .drift, .update, "the truth differs from the displayed and the intended content",
                    APNsMapping.update(content, timestamp: fresh))
            }
        }
        if let intended = state.intended, let event = intended.event,
            let delivery = deliveries().first(where: { $0.event == event }),
            delivery.verdict == .rejected || delivery.verdict == .lost
        {
            let why = delivery.verdict == .rejected ? "rejected (\(delivery.reason ?? "unknown"))" : "lost"
            guard let content = content(intended), !content.isTooLarge, delivery.reason != "payloadTooLarge" else {
                return entry(.undelivered, .none, "the intended content was \(why) and cannot be resent")
            }
            return entry(
                .undelivered, .update, "the intended content (timestamp \(intended.timestamp)) was \(why): resend it",
                APNsMapping.update(content, timestamp: fresh))
        }
        return nil
    }

    /// A timestamp the device will accept: the run's time, raised above every content timestamp it may show.
    static func freshTimestamp(_ state: ActivityState, at: Instant) -> Int64 {
        let newest = max(state.displayed?.timestamp ?? .min, state.intended?.timestamp ?? .min)
        return max(at.seconds, newest == .min ? .min : newest &+ 1)
    }

    static func channel(of state: ActivityState) -> String? {
        if case .channel(let channel)? = state.pushType { return channel }
        return state.channels.first
    }

    static func content(_ snapshot: ContentSnapshot?) -> ActivityContent? {
        snapshot.map { ActivityContent(state: $0.state, staleDate: $0.staleDate, relevanceScore: $0.relevanceScore) }
    }
}
