import ActivityModel
import Testing

@Suite("Resync planner")
struct ResyncPlannerTests {
    static let t0 = Instant(seconds: 1_795_204_800)

    static func state(
        _ id: String, phase: Phase = .active, intended: Int64 = 1_795_204_800, token: String? = nil,
        attributes: JSONValue = ["order": "1"], requestedAt: Instant = t0
    ) throws -> ActivityState {
        var events = [
            PositionedEvent(
                position: 1,
                event: LedgerEvent(
                    id: "\(id)-r", stream: .activity(id), at: requestedAt,
                    data: .request(
                        RequestData(
                            attributesType: "Pizza", attributes: attributes,
                            content: ActivityContent(state: ["eta": 5]), installation: "I1"))))
        ]
        if intended != requestedAt.seconds {
            events.append(
                PositionedEvent(
                    position: 2,
                    event: LedgerEvent(
                        id: "\(id)-u", stream: .activity(id), at: requestedAt.adding(milliseconds: 1000),
                        data: .update(UpdateData(content: ActivityContent(state: ["eta": 3]), timestamp: intended)))))
        }
        if let token {
            events.append(
                PositionedEvent(
                    position: 3,
                    event: LedgerEvent(
                        id: "\(id)-t", stream: .activity(id), at: requestedAt, data: .token(TokenData(token: token)))))
        }
        if phase == .ended {
            events.append(
                PositionedEvent(
                    position: 4,
                    event: LedgerEvent(
                        id: "\(id)-e", stream: .activity(id), at: requestedAt.adding(milliseconds: 2000),
                        data: .end(EndData(timestamp: requestedAt.seconds + 2)))))
        }
        return try ActivityFold.state(activity: id, events: events, asOf: t0.adding(hours: 1))
    }

    static func entry(
        _ id: String, _ phase: Phase = .active, timestamp: Int64? = 1_795_204_800, hash: String? = nil,
        token: String? = nil
    ) -> DeviceSnapshot.Entry {
        DeviceSnapshot.Entry(
            activity: id, attributesType: "Pizza", activityState: phase, contentTimestamp: timestamp,
            contentHash: hash, pushToken: token)
    }

    @Test("one action per activity, each with its reason")
    func everyAction() throws {
        let now = Self.t0.adding(hours: 1)
        let ledger = [
            try Self.state("behind", intended: Self.t0.seconds + 60, attributes: ["order": "behind"]),
            try Self.state("over", phase: .ended, attributes: ["order": "over"]),
            try Self.state("cleaned", attributes: ["order": "cleaned"]),
            try Self.state("gone", attributes: ["order": "gone"]),
            try Self.state("dupOld", attributes: ["order": "dup"]),
            try Self.state("dupNew", attributes: ["order": "dup"], requestedAt: Self.t0.adding(milliseconds: 5000)),
            try Self.state("token", token: "aa", attributes: ["order": "token"]),
            try Self.state("fine", attributes: ["order": "fine"]),
        ]
        let snapshot = DeviceSnapshot(
            installation: "I1", at: now,
            activities: [
                Self.entry("behind"), Self.entry("over"), Self.entry("cleaned", .dismissed), Self.entry("stranger"),
                Self.entry("dupOld"), Self.entry("dupNew"), Self.entry("token", token: "bb"),
                Self.entry("fine", hash: ActivityContent.hash(of: ["eta": 5])),
            ])
        let plan = ResyncPlanner.plan(snapshot: snapshot, ledger: ledger, now: now)
        var actions: [String: ReconcileAction] = [:]
        for action in plan.actions { actions[action.activity] = action.action }
        #expect(
            actions == [
                "behind": .update, "over": .end, "cleaned": .cleanup, "stranger": .adopt, "gone": .forget,
                "dupOld": .endDuplicate, "dupNew": .none, "token": .rebind, "fine": .none,
            ])
        #expect(plan.actions.allSatisfy { !$0.reason.isEmpty })
        let update = try #require(plan.actions.first { $0.action == .update })
        #expect(update.payload?["aps"]?["event"] == "update")
        #expect(update.payload?["aps"]?["timestamp"] == .int(now.seconds))
        #expect(update.payload?["aps"]?["content-state"] == ["eta": 3])
        let end = try #require(plan.actions.first { $0.action == .end })
        #expect(end.payload?["aps"]?["event"] == "end")
        #expect(plan.actions.first { $0.action == .forget }?.payload == nil)
        #expect(plan.json["installation"] == "I1")
    }

    @Test("other content at the intended timestamp is an update whose reason says the hash differs, not 'behind'")
    func otherContentSameTimestamp() throws {
        let now = Self.t0.adding(hours: 1)
        let ledger = [
            try Self.state("same", attributes: ["order": "same"]),
            try Self.state("older", intended: Self.t0.seconds + 60, attributes: ["order": "older"]),
        ]
        let snapshot = DeviceSnapshot(
            installation: "I1", at: now,
            activities: [
                Self.entry("same", hash: ActivityContent.hash(of: ["eta": 9])),
                Self.entry("older", hash: ActivityContent.hash(of: ["eta": 9])),
            ])
        let plan = ResyncPlanner.plan(snapshot: snapshot, ledger: ledger, now: now)
        let same = try #require(plan.actions.first { $0.activity == "same" })
        #expect(same.action == .update)
        #expect(same.reason.contains("hash differs"), "\(same.reason)")
        #expect(!same.reason.contains("behind"), "\(same.reason)")
        let older = try #require(plan.actions.first { $0.activity == "older" })
        #expect(older.action == .update)
        #expect(older.reason.contains("behind"), "\(older.reason)")
    }

    @Test("the fresh timestamp is newer than what the device shows")
    func freshTimestamp() throws {
        let now = Self.t0
        let ledger = [try Self.state("a", intended: Self.t0.seconds + 7200)]
        let snapshot = DeviceSnapshot(
            installation: "I1", at: now, activities: [Self.entry("a", timestamp: Self.t0.seconds + 3600)])
        let plan = ResyncPlanner.plan(snapshot: snapshot, ledger: ledger, now: now)
        #expect(plan.actions.first?.payload?["aps"]?["timestamp"] == .int(Self.t0.seconds + 3601))
    }
}

@Suite("Device snapshot")
struct DeviceSnapshotTests {
    @Test("a snapshot decodes, and a bad one names the field")
    func decode() throws {
        let good = #"{"installation":"I1","at":"2026-11-20T21:00:00Z","activities":[{"activity":"A","attributesType":"Pizza","activityState":"active","contentTimestamp":1795206000,"contentHash":"ab"}]}"#
        let snapshot = try DeviceSnapshot.decode(Array(good.utf8))
        #expect(snapshot.activities.first?.activityState == .active)
        #expect(snapshot.at == Instant(rfc3339: "2026-11-20T21:00:00Z"))
        let bad = #"{"installation":"I1","at":1795206000,"activities":[{"activity":"A","attributesType":"P","activityState":"active"},{"activity":"B","attributesType":"P","activityState":"gone"}]}"#
        do {
            _ = try DeviceSnapshot.decode(Array(bad.utf8))
            Issue.record("accepted")
        } catch {
            #expect(error.field == "activities[1].activityState")
            #expect(error.code == .unknownValue)
        }
    }
}
