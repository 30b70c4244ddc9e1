import ActivityModel
import Testing

/// Properties over generated histories: phase never moves backwards as T grows, and the outcome does not
/// depend on the order the events are handed over (same-`at` events are ordered by position).
@Suite("Fold properties")
struct FoldPropertyTests {
    static let t0 = Instant(seconds: 1_795_204_800)

    static func history(seed: UInt64) -> [PositionedEvent] {
        var rng = SeededGenerator(seed: seed)
        var events: [PositionedEvent] = []
        func add(_ at: Instant, _ data: EventData, source: Source = .server) {
            let id = "e\(events.count + 1)"
            events.append(
                PositionedEvent(
                    position: Int64(events.count + 1),
                    event: LedgerEvent(id: id, stream: .activity("A"), at: at, source: source, data: data)))
        }
        let stale = Bool.random(using: &rng) ? t0.adding(hours: Int64.random(in: 1...9, using: &rng)) : nil
        add(
            t0,
            .request(
                RequestData(
                    attributesType: "T", attributes: ["k": "v"],
                    content: ActivityContent(state: ["s": 0], staleDate: stale), pushType: .token,
                    scheduledStart: Bool.random(using: &rng) ? t0.adding(hours: 1) : nil)))
        add(t0, .token(TokenData(token: "aa")))
        for _ in 0..<Int.random(in: 5...40, using: &rng) {
            // Coarse times so that many events share an `at`.
            let at = t0.adding(milliseconds: Int64.random(in: 0...50, using: &rng) * 15 * 60_000)
            let ts = at.seconds + Int64.random(in: -3600...3600, using: &rng)
            switch Int.random(in: 0..<10, using: &rng) {
            case 0...3:
                add(at, .update(UpdateData(content: ActivityContent(state: ["s": .int(ts)], staleDate: stale), timestamp: ts)))
            case 4:
                let policies: [DismissalPolicy] = [.default, .immediate, .after(at.adding(hours: 2))]
                add(at, .end(EndData(timestamp: ts, dismissalPolicy: policies.randomElement(using: &rng))))
            case 5: add(at, .dismiss(DismissData(by: .user)), source: .app)
            case 6:
                let status = [200, 200, 410, 429].randomElement(using: &rng)!
                add(at, .push(PushData(refersTo: "e\(Int.random(in: 1...max(1, events.count), using: &rng))", status: status)))
            case 7:
                add(at, .observe(ObserveData(activityState: .active, contentTimestamp: ts)), source: .device)
            case 8: add(at, .token(TokenData(token: "bb\(events.count)")))
            default:
                let phase = [Phase.ended, .dismissed, .active].randomElement(using: &rng)!
                add(at, .observe(ObserveData(activityState: phase)), source: .device)
            }
        }
        return events
    }

    @Test("phase never moves backwards as T grows", arguments: 0..<60)
    func phaseIsMonotonic(seed: Int) throws {
        let events = Self.history(seed: UInt64(seed))
        var previous = -1
        var ended = false
        for step in 0...(15 * 4) {
            let asOf = Self.t0.adding(milliseconds: Int64(step) * 15 * 60_000 - 1 + Int64(step % 2))
            guard asOf >= Self.t0 else { continue }
            let state = try ActivityFold.state(activity: "A", events: events, asOf: asOf)
            #expect(state.phase.rank >= previous, "seed \(seed) at \(asOf): \(state.phase)")
            previous = state.phase.rank
            if ended { #expect(state.endedBy != nil || state.dismissedBy != nil) }
            ended = !state.phase.isLive
        }
    }

    @Test("the result does not depend on the order events are handed over", arguments: 0..<30)
    func orderIndependent(seed: Int) throws {
        let events = Self.history(seed: UInt64(seed))
        var rng = SeededGenerator(seed: UInt64(seed) &+ 1000)
        let shuffled = events.shuffled(using: &rng)
        let asOf = Self.t0.adding(hours: 10)
        #expect(
            try ActivityFold.state(activity: "A", events: events, asOf: asOf)
                == ActivityFold.state(activity: "A", events: shuffled, asOf: asOf))
        #expect(
            DeliveryVerdicts.audit(activity: "A", events: events, asOf: asOf)
                == DeliveryVerdicts.audit(activity: "A", events: shuffled, asOf: asOf))
    }

    @Test("events with the same at apply in position order")
    func sameAtUsesPosition() throws {
        func update(_ position: Int64, _ ts: Int64) -> PositionedEvent {
            PositionedEvent(
                position: position,
                event: LedgerEvent(
                    id: "u\(position)", stream: .activity("A"), at: Self.t0.adding(hours: 1),
                    data: .update(UpdateData(content: ActivityContent(state: ["n": .int(position)]), timestamp: ts))))
        }
        let request = PositionedEvent(
            position: 1,
            event: LedgerEvent(
                id: "r", stream: .activity("A"), at: Self.t0,
                data: .request(
                    RequestData(attributesType: "T", attributes: [:], content: ActivityContent(state: [:])))))
        let events = [update(3, Self.t0.seconds + 100), request, update(2, Self.t0.seconds + 100)]
        let state = try ActivityFold.state(activity: "A", events: events, asOf: Self.t0.adding(hours: 2))
        // Equal timestamps: the later position is displayed and intended.
        #expect(state.intended?.event == "u3")
        #expect(state.displayed?.event == "u3")
    }

    @Test("no request at or before T is 'no such activity at T'")
    func noSuchActivity() {
        let events = Self.history(seed: 1)
        #expect(throws: NoSuchActivity.self) {
            try ActivityFold.state(activity: "A", events: events, asOf: Self.t0.adding(milliseconds: -1))
        }
        #expect(throws: NoSuchActivity.self) {
            try ActivityFold.state(activity: "B", events: events, asOf: Self.t0.adding(hours: 1))
        }
        let error = NoSuchActivity(activity: "A", asOf: Self.t0)
        #expect(error.description.hasPrefix("no such activity at 2026-11-20T20:00:00.000Z"))
    }

    @Test("the state JSON has the SPEC shape with nulls written and reads back")
    func stateJSON() throws {
        let events = Self.history(seed: 7)
        let state = try ActivityFold.state(activity: "A", events: events, asOf: Self.t0.adding(hours: 3))
        let json = state.json
        let keys = json.objectValue?.keys ?? []
        #expect(
            Array(keys.prefix(12)) == [
                "activity", "asOf", "phase", "endedBy", "dismissedBy", "attributesType", "attributes", "displayed",
                "intended", "token", "events", "lastPosition",
            ])
        #expect(json["endedBy"] != nil)
        #expect(ActivityState(json: json) == state)
        let reparsed = try JSONParser.parse(json.compactBytes)
        #expect(ActivityState(json: reparsed) == state)
    }
}

@Suite("Timeline")
struct TimelineTests {
    @Test("each timeline entry shows the phase right after its event")
    func timeline() throws {
        let scenario = try Scenario.load("end-default-lingers-4h")
        let entries = ActivityFold.timeline(
            activity: "A", events: scenario.events, to: FoldPropertyTests.t0.adding(hours: 6))
        #expect(entries.map(\.state.phase) == [.active, .ended])
        #expect(entries.map { $0.event.event.id } == ["r", "e"])
        let channel = try Scenario.load("channel-update-reaches-subscribers-b")
        let b = ActivityFold.timeline(activity: "B", events: channel.events, to: FoldPropertyTests.t0.adding(hours: 6))
        #expect(b.map { $0.event.event.id } == ["rb", "s1", "cu1", "cp1"])
        #expect(b.last?.state.displayed?.event == "cu1")
    }
}

@Suite("Tokens")
struct TokenTests {
    static func event(_ position: Int64, _ id: String, minutes: Int64, _ data: EventData, stream: StreamName = .activity("A"))
        -> PositionedEvent
    {
        PositionedEvent(
            position: position,
            event: LedgerEvent(
                id: id, stream: stream, at: FoldPropertyTests.t0.adding(milliseconds: minutes * 60_000), data: data))
    }

    @Test("a push to a token that a newer token replaced is flagged, and the history keeps both")
    func supersededTokenPush() throws {
        let events = [
            Self.event(
                1, "r", minutes: 0,
                .request(RequestData(attributesType: "T", attributes: [:], content: ActivityContent(state: [:]), pushType: .token))),
            Self.event(2, "k1", minutes: 1, .token(TokenData(token: "aa"))),
            Self.event(3, "k2", minutes: 2, .token(TokenData(token: "bb", environment: .production))),
            Self.event(4, "u1", minutes: 3, .update(UpdateData(content: ActivityContent(state: ["x": 1]), timestamp: FoldPropertyTests.t0.seconds + 180))),
            Self.event(5, "p1", minutes: 4, .push(PushData(refersTo: "u1", status: 200, token: "aa"))),
        ]
        let asOf = FoldPropertyTests.t0.adding(hours: 1)
        let state = try ActivityFold.state(activity: "A", events: events, asOf: asOf)
        #expect(state.token == "bb")
        #expect(state.tokenHistory.map(\.token) == ["aa", "bb"])
        #expect(state.counters.pushesToSupersededToken == 1)
        let delivery = try #require(DeliveryVerdicts.audit(activity: "A", events: events, asOf: asOf).first)
        #expect(delivery.pushesToSupersededToken == ["p1"])
        #expect(delivery.verdict == .accepted)
    }

    @Test("push-to-start tokens are per installation, newest last")
    func startTokens() {
        let events = [
            Self.event(1, "s1", minutes: 0, .startToken(TokenData(token: "01")), stream: .installation("I")),
            Self.event(2, "s2", minutes: 5, .startToken(TokenData(token: "02")), stream: .installation("I")),
            Self.event(3, "s3", minutes: 1, .startToken(TokenData(token: "09")), stream: .installation("J")),
        ]
        let at3 = FoldPropertyTests.t0.adding(milliseconds: 3 * 60_000)
        #expect(InstallationFold.startTokens(installation: "I", events: events, asOf: at3).map(\.token) == ["01"])
        #expect(
            InstallationFold.startTokens(installation: "I", events: events, asOf: FoldPropertyTests.t0.adding(hours: 1))
                .map(\.token) == ["01", "02"])
    }
}
