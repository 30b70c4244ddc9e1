import ActivityModel
import Foundation
import Ledger
import LedgerStore
import LedgerTesting
import Testing

@Suite("Reconcile: foreground resync")
struct ReconcileResyncTests {
    typealias F = ReconcileFixtures

    /// One ledger holding a case of every action for installation I1, and the device's snapshot at 21:30.
    static let ledgerEvents = F.lines(
        // update: the device shows the request's content, the ledger intends a newer one.
        F.request("UPD"), F.update("UPD", at: 5, state: #"{"eta":3}"#),
        // end: the server ended it, the device still shows it.
        F.request("END"), F.end("END", at: 10),
        // cleanup: live in the ledger, the device reports it ended.
        F.request("CLN"),
        // forget: live in the ledger, gone from the device.
        F.request("FGT"),
        // endDuplicate: same type and attributes, DUP2 started later and is kept.
        F.request("DUP1", attributes: #"{"ride":"same"}"#), F.request("DUP2", at: 1, attributes: #"{"ride":"same"}"#),
        // rebind: the device holds another token than the ledger's newest.
        F.request("RBD"), F.token("RBD", at: 1, token: "aa11"),
        // none: the device shows the intended content.
        F.request("NON"))

    static func snapshot(_ entries: [DeviceSnapshot.Entry]? = nil) -> DeviceSnapshot {
        let shown = F.stamp(0)
        return DeviceSnapshot(
            installation: "I1", at: F.instant(30),
            activities: entries ?? [
                .init(activity: "UPD", attributesType: "RideAttributes", activityState: .active, contentTimestamp: shown),
                .init(activity: "END", attributesType: "RideAttributes", activityState: .active, contentTimestamp: shown),
                .init(activity: "CLN", attributesType: "RideAttributes", activityState: .ended, contentTimestamp: shown),
                .init(activity: "ADP", attributesType: "RideAttributes", activityState: .active, contentTimestamp: shown),
                .init(activity: "DUP1", attributesType: "RideAttributes", activityState: .active, contentTimestamp: shown),
                .init(activity: "DUP2", attributesType: "RideAttributes", activityState: .active, contentTimestamp: F.stamp(1)),
                .init(
                    activity: "RBD", attributesType: "RideAttributes", activityState: .active, contentTimestamp: shown,
                    pushToken: "bb22"),
                .init(activity: "NON", attributesType: "RideAttributes", activityState: .active, contentTimestamp: shown),
            ])
    }

    @Test(
        "each action kind is planned for its case",
        arguments: [
            ("UPD", ReconcileAction.update, true), ("END", .end, true), ("CLN", .cleanup, false),
            ("ADP", .adopt, false), ("FGT", .forget, false), ("DUP1", .endDuplicate, true), ("DUP2", .none, false),
            ("RBD", .rebind, false), ("NON", .none, false),
        ])
    func actionKinds(activity: String, expected: ReconcileAction, sends: Bool) async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ledgerEvents)
        let plan = try await temp.ledger.resync(snapshot: Self.snapshot())
        #expect(plan.installation == "I1")
        let action = try #require(plan.actions.first { $0.activity == activity })
        #expect(action.action == expected, "\(action.reason)")
        #expect((action.payload != nil) == sends)
        if let aps = action.payload?["aps"] {
            // A fresh timestamp: the snapshot's time, newer than anything the device shows.
            #expect(aps["timestamp"]?.numberValue?.int64Value == F.stamp(30))
            #expect(aps["event"]?.stringValue == (expected == .update ? "update" : "end"))
        }
        #expect(Set(plan.actions.map(\.activity)).count == plan.actions.count)
    }

    @Test("the update payload carries the intended content")
    func updatePayload() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ledgerEvents)
        let plan = try await temp.ledger.resync(snapshot: Self.snapshot())
        let update = try #require(plan.actions.first { $0.activity == "UPD" })
        #expect(update.payload?["aps"]?["content-state"] == ["eta": 3])
        #expect(plan.json["actions"]?.arrayValue?.first?["action"]?.stringValue != nil)
    }

    @Test("the snapshot is recorded as observations and the plan as reconcile events")
    func recordsObservationsAndDecisions() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ledgerEvents)
        _ = try await temp.ledger.resync(snapshot: Self.snapshot())
        let state = try await temp.ledger.state(activity: "UPD", at: F.instant(31))
        #expect(state.counters.observations == 1)
        #expect(state.counters.reconciles == 1)
        let forgotten = try await temp.ledger.state(activity: "FGT", at: F.instant(31))
        #expect(forgotten.counters.observations == 0)
        #expect(forgotten.counters.reconciles == 1)
        // The adopted activity's stream holds what was seen and decided, but no invented request.
        await #expect(throws: LedgerError.self) { try await temp.ledger.state(activity: "ADP", at: F.instant(31)) }
    }

    @Test("re-sending the same snapshot appends nothing and returns the same plan")
    func idempotent() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ledgerEvents)
        let first = try await temp.ledger.resync(snapshot: Self.snapshot())
        let position = try temp.ledger.store.lastPosition()
        let second = try await temp.ledger.resync(snapshot: Self.snapshot())
        #expect(second == first)
        #expect(try temp.ledger.store.lastPosition() == position)
    }

    @Test("another snapshot under the same installation and time is a conflict")
    func differentSnapshotConflicts() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ledgerEvents)
        _ = try await temp.ledger.resync(snapshot: Self.snapshot())
        var changed = Self.snapshot()
        changed.activities[0].contentTimestamp = F.stamp(5)
        let error = await #expect(throws: LedgerError.self) { try await temp.ledger.resync(snapshot: changed) }
        #expect(error?.code == .conflict)
        #expect(error?.message.contains("a different snapshot was already recorded for installation") == true)
        #expect(error?.field == "at")
    }

    @Test("a snapshot file parses, and a bad field is named")
    func parsesSnapshotJSON() throws {
        let text = """
            {"installation":"I1","at":"2026-11-20T21:30:00Z","activities":[{"activity":"A","attributesType":"T","activityState":"active","contentTimestamp":1795208400,"contentHash":null}]}
            """
        let snapshot = try DeviceSnapshot(json: Array(text.utf8))
        #expect(snapshot.activities.first?.contentTimestamp == 1_795_208_400)
        #expect(snapshot.at == F.instant(30))
        let bad = text.replacingOccurrences(of: "\"active\"", with: "\"shown\"")
        let error = #expect(throws: LedgerError.self) { try DeviceSnapshot(json: Array(bad.utf8)) }
        #expect(error?.field == "activities[0].activityState")
    }

    /// Found by a probe: the doors read snapshots with a second parser that took a key given twice, a non-hex push
    /// token and an activity listed twice (whose second entry was dropped without a word).
    @Test("a snapshot is refused, naming the field, for a key given twice, a push token that is not hex, an activity listed twice")
    func refusesContradictorySnapshots() throws {
        let entry = #"{"activity":"A","attributesType":"T","activityState":"active"}"#
        let refused: [(String, String)] = [
            (#"{"installation":"I1","installation":"I2","at":1,"activities":[]}"#, "installation"),
            (#"{"installation":"I1","at":1,"activities":[{"activity":"A","attributesType":"T","activityState":"active","pushToken":"zz"}]}"#, "activities[0].pushToken"),
            (#"{"installation":"I1","at":1,"activities":[{"activity":"A","attributesType":"T","activityState":"active","pushToken":""}]}"#, "activities[0].pushToken"),
            (#"{"installation":"I1","at":1,"activities":[\#(entry),{"activity":"B","activityState":"ended"},\#(entry)]}"#, "activities[2].activity"),
            (#"{"installation":"Café","at":1,"activities":[]}"#, "installation"),
        ]
        for (text, field) in refused {
            let error = #expect(throws: LedgerError.self, "\(text)") { try DeviceSnapshot(json: Array(text.utf8)) }
            #expect(error?.field == field, "\(text): \(String(describing: error))")
        }
        let token = try DeviceSnapshot(json: Array(#"{"installation":"I1","at":1,"activities":[{"activity":"A","activityState":"active","pushToken":"AbC012"}]}"#.utf8))
        #expect(token.activities.first?.pushToken == "AbC012" && token.activities.first?.attributesType == "")
    }
}
