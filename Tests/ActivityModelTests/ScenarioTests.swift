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

    @Test("there is a scenario file for each lifecycle rule")
    func scenariosExist() {
        #expect(Scenario.names.count >= 20)
    }
}
