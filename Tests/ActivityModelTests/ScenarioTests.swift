import ActivityModel
import Testing

/// Runs every `Scenarios/*.jsonl` against its `.expect.json`. Each check names a time (`asOf`) and only the
/// fields it lists are compared; `null` means "must be absent". Deliveries are `verdict` or `rejected:reason`.
@Suite("Scenario files")
struct ScenarioTests {
    @Test("every scenario file matches its expectations", arguments: Scenario.names)
    func scenario(_ name: String) throws {
        let scenario = try Scenario.load(name)
        #expect(!scenario.checks.isEmpty, "scenario \(name) has no checks")
        for check in scenario.checks {
            let asOf = try #require(check["asOf"]?.stringValue.flatMap(Instant.init(rfc3339:)))
            let state = try ActivityFold.state(activity: scenario.activity, events: scenario.events, asOf: asOf)
            let context = "\(name) as of \(asOf)"
            if let phase = check["phase"]?.stringValue {
                #expect(state.phase.rawValue == phase, "\(context): phase")
            }
            if let endedBy = check["endedBy"] {
                #expect(state.endedBy?.rawValue == endedBy.stringValue, "\(context): endedBy")
            }
            if let dismissedBy = check["dismissedBy"] {
                #expect(state.dismissedBy?.rawValue == dismissedBy.stringValue, "\(context): dismissedBy")
            }
            if let token = check["token"] { #expect(state.token == token.stringValue, "\(context): token") }
            if let events = check["events"]?.numberValue?.int64Value {
                #expect(state.events == Int(events), "\(context): events")
            }
            if let timestamp = check["displayedTimestamp"]?.numberValue?.int64Value {
                #expect(state.displayed?.timestamp == timestamp, "\(context): displayed timestamp")
            }
            if let timestamp = check["intendedTimestamp"]?.numberValue?.int64Value {
                #expect(state.intended?.timestamp == timestamp, "\(context): intended timestamp")
            }
            if let event = check["displayedEvent"]?.stringValue {
                #expect(state.displayed?.event == event, "\(context): displayed event")
            }
            if let event = check["intendedEvent"]?.stringValue {
                #expect(state.intended?.event == event, "\(context): intended event")
            }
            if let expected = check["deliveries"]?.objectValue {
                let deliveries = DeliveryVerdicts.audit(activity: scenario.activity, events: scenario.events, asOf: asOf)
                var actual: [String: String] = [:]
                for delivery in deliveries {
                    actual[delivery.event] =
                        delivery.reason.map { "\(delivery.verdict.rawValue):\($0)" } ?? delivery.verdict.rawValue
                    #expect((delivery.reason != nil) == (delivery.verdict == .rejected), "only rejected has a reason")
                    #expect(
                        DeliveryVerdicts.verdict(
                            of: delivery.event, activity: scenario.activity, events: scenario.events, asOf: asOf)
                            == delivery, "verdict(of:) agrees with audit")
                }
                var wanted: [String: String] = [:]
                for member in expected.members { wanted[member.key] = member.value.stringValue }
                #expect(actual == wanted, "\(context): deliveries")
            }
        }
    }

    /// Each rule of SPEC §1 and §4 with the scenario that shows it and what the fold must produce there: a
    /// phase, a cause, or a verdict (`verdict` or `rejected:reason`) at one of the scenario's check times.
    static let rules: [(rule: String, scenario: String, shows: String)] = [
        ("the system ends an activity at start + 8 h", "system-end-at-8h", "endedBy:system"),
        ("an ended activity lingers up to 4 h (default policy)", "end-default-lingers-4h", "dismissedBy:policy"),
        ("immediate dismissal removes it at the end", "end-immediate", "dismissedBy:policy"),
        ("after(date) within 4 h of the end", "end-after-date-within-4h", "phase:ended"),
        ("after(date) is capped at end + 4 h", "end-after-date-beyond-4h-cap", "dismissedBy:policy"),
        ("after(date) before the end removes it at the end", "end-after-date-before-end", "dismissedBy:policy"),
        ("a passed staleDate makes it stale", "stale-date", "phase:stale"),
        ("a scheduled start is pending until its date", "scheduled-start", "phase:pending"),
        ("an older timestamp is superseded", "superseded-and-equal-timestamps", "superseded"),
        ("a timestamp over 8 h ahead is dropped", "future-timestamp", "rejected:futureTimestamp"),
        ("content over 4096 bytes is never displayed", "content-state-4096-bytes", "rejected:payloadTooLarge"),
        ("a 410 kills the token from its timestamp", "dead-token-from-410-timestamp", "rejected:deadToken"),
        ("a 410 without timestamp kills it from the push", "dead-token-410-without-timestamp", "rejected:deadToken"),
        ("an update after a user dismissal is after the end", "update-after-user-dismissal", "rejected:afterEnd"),
        ("an end after the end is after the end", "end-after-end", "rejected:afterEnd"),
        ("only a device observation proves applied", "device-evidence", "applied"),
        ("an accepted update the device never showed is lost", "device-evidence", "lost"),
        ("the best push attempt counts", "retries-429-then-200", "accepted"),
        ("a person can remove it", "dismiss-by-user-before-deadline", "dismissedBy:user"),
        ("a dismissal exactly at the deadline is the policy's", "dismiss-exactly-at-policy-deadline", "dismissedBy:policy"),
        ("the system can remove it while active", "system-dismiss-while-active", "dismissedBy:system"),
        ("a device report of its end", "device-reports-ended", "endedBy:system"),
        ("a channel update reaches its subscribers", "channel-update-reaches-subscribers-a", "accepted"),
    ]

    @Test("each lifecycle rule has a scenario whose fold shows it", arguments: rules.map(\.rule))
    func ruleHasScenario(_ rule: String) throws {
        let entry = try #require(Self.rules.first { $0.rule == rule })
        let scenario = try Scenario.load(entry.scenario)
        var shown: Set<String> = []
        for check in scenario.checks {
            guard let asOf = check["asOf"]?.stringValue.flatMap(Instant.init(rfc3339:)) else { continue }
            let state = try ActivityFold.state(activity: scenario.activity, events: scenario.events, asOf: asOf)
            shown.insert("phase:\(state.phase.rawValue)")
            if let endedBy = state.endedBy { shown.insert("endedBy:\(endedBy.rawValue)") }
            if let dismissedBy = state.dismissedBy { shown.insert("dismissedBy:\(dismissedBy.rawValue)") }
            for delivery in DeliveryVerdicts.audit(activity: scenario.activity, events: scenario.events, asOf: asOf) {
                shown.insert(delivery.reason.map { "rejected:\($0)" } ?? delivery.verdict.rawValue)
            }
        }
        #expect(shown.contains(entry.shows), "\(entry.scenario) never shows \(entry.shows): \(shown.sorted())")
    }
}
