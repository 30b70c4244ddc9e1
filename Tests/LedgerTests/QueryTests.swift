@testable import ActivityModel
import GRDB
@testable import Ledger
import LedgerStore
import Logging
import LedgerTesting
import Testing

@Suite("Queries: state, timeline, audit, lists, replay")
struct QueryTests {
    static let ride = """
        {"id":"10000000-0000-4000-8000-000000000001","stream":"activity:R1","type":"request","at":"2026-11-20T21:00:00Z","data":{"attributesType":"RideAttributes","attributes":{"ride":"R1"},"content":{"state":{"eta":5},"staleDate":"2026-11-20T21:30:00Z"},"pushType":"token","installation":"I1"}}
        {"id":"10000000-0000-4000-8000-000000000002","stream":"activity:R1","type":"token","at":"2026-11-20T21:00:01Z","source":"app","data":{"token":"aa11"}}
        {"id":"10000000-0000-4000-8000-000000000003","stream":"activity:R1","type":"update","at":"2026-11-20T21:05:00Z","data":{"content":{"state":{"eta":3}},"timestamp":1795208700}}
        {"id":"10000000-0000-4000-8000-000000000004","stream":"activity:R1","type":"push","at":"2026-11-20T21:05:01Z","source":"apns","data":{"refersTo":"10000000-0000-4000-8000-000000000003","status":200,"token":"aa11"}}
        {"id":"10000000-0000-4000-8000-000000000005","stream":"activity:R1","type":"observe","at":"2026-11-20T21:06:00Z","source":"device","data":{"activityState":"active","contentTimestamp":1795208700}}
        """

    /// Found by a probe: `limit=10000` of ~250 KB events made one answer of up to 2.5 GB.
    @Test("a feed page stops after the event that brings its payloads past 8 MiB, and the next page goes on from there")
    func feedPageBytes() async throws {
        let temp = try TemporaryLedger()
        let blob = String(repeating: "x", count: 200_000)
        let lines = (0..<60).map { index in
            #"{"stream":"activity:BIG\#(index)","type":"request","at":"2026-11-20T21:00:00Z","data":{"attributesType":"A","attributes":{"blob":"\#(blob)"},"content":{"state":{"n":\#(index)}}}}"#
        }
        for chunk in stride(from: 0, to: lines.count, by: 10) {
            try await temp.append(lines[chunk..<chunk + 10].joined(separator: "\n"))
        }
        let first = try await temp.ledger.feed(after: 0, limit: 10_000)
        #expect((40..<60).contains(first.events.count), "\(first.events.count)")
        #expect(first.lastPosition == first.events.last?.position)
        let second = try await temp.ledger.feed(after: first.lastPosition, limit: 10_000)
        #expect(first.events.count + second.events.count == 60)
        #expect(second.events.first?.position == first.lastPosition + 1)
    }

    @Test("state as of a past time shows what the Lock Screen showed then")
    func stateAsOf() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ride)
        let before = try await temp.ledger.state(activity: "R1", at: Instant(rfc3339: "2026-11-20T21:04:00Z")!)
        #expect(before.phase == .active)
        #expect(before.displayed?.state == ["eta": 5])
        let after = try await temp.ledger.state(activity: "R1", at: Instant(rfc3339: "2026-11-20T21:10:00Z")!)
        #expect(after.displayed?.state == ["eta": 3])
        #expect(after.token == "aa11")
        #expect(after.events == 5)
        let stale = try await temp.ledger.state(activity: "R1", at: Instant(rfc3339: "2026-11-20T21:31:00Z")!)
        #expect(stale.phase == .active || stale.phase == .stale)
    }

    @Test("state before the request is 'no such activity at T'")
    func noSuchActivity() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ride)
        let error = await #expect(throws: LedgerError.self) {
            try await temp.ledger.state(activity: "R1", at: Instant(rfc3339: "2026-11-20T20:59:59Z")!)
        }
        #expect(error?.code == .notFound)
        #expect(error?.message.contains("no such activity at") == true)
    }

    @Test("audit shows the observed update as applied")
    func auditApplied() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ride)
        let audit = try await temp.ledger.audit(activity: "R1")
        let update = try #require(audit.deliveries.first { $0.event == "10000000-0000-4000-8000-000000000003" })
        #expect(update.verdict == .applied)
        let byUpdate = try await temp.ledger.audit(update: "10000000-0000-4000-8000-000000000003")
        #expect(byUpdate.deliveries.map(\.activity) == ["R1"])
    }

    @Test("a channel update is audited once per subscribed activity")
    func channelUpdateReachesSubscribers() async throws {
        let temp = try TemporaryLedger()
        try await temp.append("""
            {"stream":"activity:M1","type":"request","at":"2026-11-20T20:00:00Z","data":{"attributesType":"Score","attributes":{},"content":{"state":{"s":"0-0"}},"pushType":{"channel":"match"}}}
            {"stream":"activity:M2","type":"request","at":"2026-11-20T20:00:00Z","data":{"attributesType":"Score","attributes":{},"content":{"state":{"s":"0-0"}}}}
            {"stream":"channel:match","type":"subscribe","at":"2026-11-20T20:00:05Z","data":{"activity":"M2"}}
            {"id":"20000000-0000-4000-8000-000000000001","stream":"channel:match","type":"update","at":"2026-11-20T20:10:00Z","data":{"content":{"state":{"s":"1-0"}},"timestamp":1795205400}}
            """)
        let audit = try await temp.ledger.audit(update: "20000000-0000-4000-8000-000000000001")
        #expect(Set(audit.deliveries.map(\.activity)) == ["M1", "M2"])
        #expect(audit.deliveries.allSatisfy { $0.verdict == .pending })
        let members = try await temp.ledger.activities(ActivityFilter(channel: "match"))
        #expect(members.activities.map(\.activity) == ["M1", "M2"])
    }

    @Test("timeline lists each event with the phase and displayed content after it")
    func timeline() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ride)
        let entries = try await temp.ledger.timeline(activity: "R1").entries
        #expect(entries.count == 5)
        #expect(entries.first?.displayed?.state == ["eta": 5])
        #expect(entries.last?.displayed?.state == ["eta": 3])
        #expect(entries.allSatisfy { $0.phase == .active })
        let window = try await temp.ledger.timeline(
            activity: "R1", from: Instant(rfc3339: "2026-11-20T21:05:00Z"), to: Instant(rfc3339: "2026-11-20T21:05:30Z")
        ).entries
        #expect(window.map(\.event.position) == [3, 4])
    }

    @Test("lists filter by phase as of a time, installation and token")
    func lists() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ride)
        let t = Instant(rfc3339: "2026-11-20T21:10:00Z")!
        #expect(try await temp.ledger.activities(ActivityFilter(phase: .active, at: t)).activities.map(\.activity) == ["R1"])
        #expect(try await temp.ledger.activities(ActivityFilter(phase: .ended, at: t)).activities.isEmpty)
        let late = Instant(rfc3339: "2026-11-21T05:30:00Z")!
        #expect(try await temp.ledger.activities(ActivityFilter(phase: .ended, at: late)).activities.map(\.activity) == ["R1"])
        #expect(try await temp.ledger.activities(ActivityFilter(installation: "I1")).activities.count == 1)
        #expect(try await temp.ledger.activities(ActivityFilter(token: "aa11")).activities.count == 1)
        #expect(try await temp.ledger.activities(ActivityFilter(token: "bb22")).activities.isEmpty)
    }

    /// The state without `lastPosition`: a replay `--until T` renumbers the kept events gaplessly, so positions
    /// name places in each file's own log.
    static func comparable(_ state: ActivityState?) -> JSONValue? {
        guard case .object(var object)? = state?.json else { return nil }
        object.members.removeAll { $0.key == "lastPosition" }
        return .object(object)
    }

    @Test("replay until T gives a ledger where state at T agrees", arguments: [21, 22] as [UInt64])
    func replayAgrees(seed: UInt64) async throws {
        let temp = try TemporaryLedger()
        let lines = RandomWorkload(seed: seed, activities: 8, eventsPerActivity: 20).lines()
        try await temp.append(lines.joined(separator: "\n"))
        let t = Instant(seconds: RandomWorkload(seed: seed).start + 3600)
        let into = temp.directory.file("replay.sqlite")
        let summary = try await temp.ledger.replay(.until(t), into: into)
        #expect(summary.events > 0 && summary.events < Int64(lines.count))
        let copy = try Ledger(path: into, logger: .init(label: "test"))
        for index in 0..<8 {
            let activity = "A\(seed)-\(index)"
            let original = try? await temp.ledger.state(activity: activity, at: t)
            let replayed = try? await copy.state(activity: activity, at: t)
            #expect(Self.comparable(original) == Self.comparable(replayed), "activity \(activity)")
        }
        #expect(try copy.store.verify().ok)
    }

    @Test("state, audit and timeline equal the fold of every stored event of the activity", arguments: [31, 32] as [UInt64])
    func queriesEqualTheFullFold(seed: UInt64) async throws {
        let temp = try TemporaryLedger()
        let workload = RandomWorkload(seed: seed, activities: 8, eventsPerActivity: 40)
        try await temp.append(workload.lines().joined(separator: "\n"))
        var compared = 0
        for index in 0..<8 {
            let activity = "A\(seed)-\(index)"
            // The read path before it was narrowed to `at` ≤ T: every event of the stream and its channels.
            let all = try await temp.ledger.read { db in try temp.ledger.relevantEvents(db, key: activity, hashes: false) }
            let events = all.map(\.positioned)
            let requested = workload.start + Int64(index) * 60
            for minutes in stride(from: -7, through: 14 * 60, by: 23) {
                let t = Instant(seconds: requested + Int64(minutes) * 60)
                let expected = try? ActivityFold.state(activity: activity, events: events, asOf: t)
                let actual = try? await temp.ledger.state(activity: activity, at: t)
                #expect(actual?.json.compactBytes == expected?.json.compactBytes, "\(activity) at \(t.rfc3339)")
                let verdicts = try? DeliveryVerdicts.deliveries(activity: activity, events: events, asOf: t)
                #expect((try? await temp.ledger.audit(activity: activity, at: t))?.deliveries == verdicts)
                if expected != nil { compared += 1 }
            }
            let byPosition = Dictionary(uniqueKeysWithValues: all.map { ($0.position, $0) })
            let to = all.map(\.event.at).max()!
            let oracle = ActivityFold.timelineByRefolding(activity: activity, events: events, to: to).map {
                TimelineStep(event: byPosition[$0.event.position]!, phase: $0.state.phase, displayed: $0.state.displayed)
            }
            let steps = try await temp.ledger.timeline(activity: activity).entries
            #expect(JSONValue.array(steps.map(\.json)).compactBytes == JSONValue.array(oracle.map(\.json)).compactBytes)
            #expect(steps.count > 10)
        }
        #expect(compared > 8 * 30)
    }

    @Test("replay to a position keeps exactly the first N events")
    func replayPosition() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ride)
        let into = temp.directory.file("p3.sqlite")
        let summary = try await temp.ledger.replay(.position(3), into: into)
        #expect(summary.events == 3 && summary.lastPosition == 3)
    }

    @Test("an event built in code with a stream that cannot read back is refused before anything is written")
    func unreadableStreamRefused() async throws {
        let temp = try TemporaryLedger()
        let event = LedgerEvent(id: nil, stream: .activity(""), at: Instant(seconds: 1), source: .ledger, data: .dismiss(DismissData(by: .user)))
        let error = await #expect(throws: LedgerError.self) { try await temp.ledger.append([event]) }
        #expect(error?.code == .badInput)
        #expect(try temp.ledger.store.lastPosition() == 0)
    }

    @Test("re-sending an event id returns its original position")
    func idempotentAppend() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ride)
        let again = try await temp.append(Self.ride.split(separator: "\n")[2...].joined(separator: "\n"))
        #expect(again.map(\.position) == [3, 4, 5])
        #expect(again.allSatisfy { $0.duplicate })
    }
}
