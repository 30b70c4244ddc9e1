/// SPEC §5 foreground resync as a pure function: the ledger's states for an installation and the device's
/// snapshot → one action per activity, mirroring what a well-written app does when it comes to the foreground.
///
/// Per device activity, the first that applies: `adopt` (unknown to the ledger), `cleanup` (device
/// ended/dismissed it, ledger disagrees), `none` (both say it is over), `end` (ledger says over, device shows it),
/// `endDuplicate` (another live activity of the installation has the same attributesType and equal attributes
/// and started later), `rebind` (device token differs from the ledger's), `update` (device content differs from
/// the intended content: by hash when the device sent one, else by an older timestamp), `none`.
/// Then each ledger activity the device does not have: `forget` when the ledger thinks it is live, else `none`.
/// Payloads carry a fresh timestamp: `now` in Unix seconds, raised above the device's content timestamp.
public enum ResyncPlanner: Sendable {
    public static func plan(snapshot: DeviceSnapshot, ledger: [ActivityState], now: Instant) -> ResyncPlan {
        let states = ledger.filter { $0.installation == nil || $0.installation == snapshot.installation }
        var byID: [String: ActivityState] = [:]
        for state in states { byID[state.activity] = state }
        let duplicates = duplicateOwners(snapshot: snapshot, byID: byID)
        var actions: [ResyncPlan.Action] = []
        var seen: Set<String> = []
        for entry in snapshot.activities where seen.insert(entry.activity).inserted {
            actions.append(action(for: entry, state: byID[entry.activity], keeper: duplicates[entry.activity], now: now))
        }
        for state in states.sorted(by: { $0.activity < $1.activity }) where !seen.contains(state.activity) {
            seen.insert(state.activity)
            if state.phase.isLive {
                actions.append(
                    .init(
                        activity: state.activity, action: .forget,
                        reason: "ledger has it \(state.phase.rawValue), the device has no such activity"))
            } else {
                actions.append(
                    .init(
                        activity: state.activity, action: .none,
                        reason: "already \(state.phase.rawValue) in the ledger and gone from the device"))
            }
        }
        return ResyncPlan(installation: snapshot.installation, actions: actions)
    }

    /// Live duplicates: activity → the activity that is kept (the newest start; ties by id).
    static func duplicateOwners(snapshot: DeviceSnapshot, byID: [String: ActivityState]) -> [String: String] {
        var groups: [[UInt8]: [ActivityState]] = [:]
        for entry in snapshot.activities where entry.activityState.isLive {
            guard let state = byID[entry.activity], state.phase.isLive else { continue }
            var key = Array(state.attributesType.utf8)
            key.append(0)
            key += state.attributes.compactBytes
            groups[key, default: []].append(state)
        }
        var owners: [String: String] = [:]
        for group in groups.values where group.count > 1 {
            let keeper = group.max { ($0.requestedAt, $0.activity) < ($1.requestedAt, $1.activity) }!
            for state in group where state.activity != keeper.activity { owners[state.activity] = keeper.activity }
        }
        return owners
    }

    static func action(for entry: DeviceSnapshot.Entry, state: ActivityState?, keeper: String?, now: Instant)
        -> ResyncPlan.Action
    {
        let id = entry.activity
        guard let state else {
            return .init(activity: id, action: .adopt, reason: "the device shows an activity the ledger never saw")
        }
        let fresh = max(now.seconds, (entry.contentTimestamp ?? .min) &+ 1)
        let deviceOver = !entry.activityState.isLive
        if deviceOver {
            if state.phase.isLive || (state.phase == .ended && entry.activityState == .dismissed) {
                return .init(
                    activity: id, action: .cleanup,
                    reason: "the device reports it \(entry.activityState.rawValue), the ledger has it \(state.phase.rawValue)")
            }
            return .init(activity: id, action: .none, reason: "both sides have it \(state.phase.rawValue)")
        }
        if !state.phase.isLive {
            let cause = state.endedBy.map { " (endedBy \($0.rawValue))" } ?? state.dismissedBy.map { " (dismissedBy \($0.rawValue))" } ?? ""
            return .init(
                activity: id, action: .end,
                reason: "the ledger has it \(state.phase.rawValue)\(cause), the device still shows it",
                payload: APNsMapping.end(content(state.intended), timestamp: fresh, dismissalPolicy: .immediate))
        }
        if let keeper {
            return .init(
                activity: id, action: .endDuplicate,
                reason: "duplicate of \(keeper) (same attributesType and attributes, started later)",
                payload: APNsMapping.end(content(state.intended), timestamp: fresh, dismissalPolicy: .immediate))
        }
        if let deviceToken = entry.pushToken, let ledgerToken = state.token, deviceToken != ledgerToken {
            return .init(
                activity: id, action: .rebind,
                reason: "the device's push token differs from the ledger's newest token")
        }
        if let intended = state.intended {
            let behind: Bool
            if let hash = entry.contentHash {
                behind = hash != intended.contentHash
            } else {
                behind = (entry.contentTimestamp ?? .min) < intended.timestamp
            }
            if behind, let content = content(intended), !content.isTooLarge {
                let shown = entry.contentTimestamp.map(String.init) ?? "unknown"
                // A hash that differs at a timestamp not older than the intended one is other content, not older
                // content: said so, rather than "behind" a timestamp it is not behind.
                let reason =
                    if let timestamp = entry.contentTimestamp, timestamp >= intended.timestamp {
                        "the device shows content of timestamp \(shown) whose hash differs from the intended content "
                            + "of \(intended.timestamp)"
                    } else {
                        "the device shows content of timestamp \(shown), behind the intended content of \(intended.timestamp)"
                    }
                return .init(
                    activity: id, action: .update, reason: reason, payload: APNsMapping.update(content, timestamp: fresh))
            }
        }
        return .init(activity: id, action: .none, reason: "the device shows the intended content")
    }

    static func content(_ snapshot: ContentSnapshot?) -> ActivityContent? {
        snapshot.map { ActivityContent(state: $0.state, staleDate: $0.staleDate, relevanceScore: $0.relevanceScore) }
    }
}
