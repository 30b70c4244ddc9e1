@testable import ActivityModel
import Testing

/// The one-pass `ActivityFold.timeline` against its definition, `timelineByRefolding` (every prefix folded from
/// scratch as of its last event's `at`), over generated histories that mix the activity's own stream, channels
/// it joins and leaves alone, other activities, installations, deadlines (8 h system end, dismissal policies,
/// 12 h cap, stale dates) and many events sharing an `at`.
@Suite("Timeline in one pass")
struct FoldTimelineTests {
    static let t0 = FoldPropertyTests.t0

    /// A random history around activity "A"; positions are not in `at` order and the order handed over is shuffled.
    static func history(seed: UInt64) -> [PositionedEvent] {
        var rng = SeededGenerator(seed: seed)
        var events: [PositionedEvent] = []
        var ids: [String] = []
        var stamps: [Int64] = []
        func add(_ stream: StreamName, _ at: Instant, _ data: EventData, source: Source = .server) {
            let id = "e\(events.count + 1)"
            ids.append(id)
            // Positions unique but shuffled against `at`, so ties on `at` go by position, not by input order.
            let position = Int64(events.count + 1) * 7 % 1_009 + 1
            events.append(
                PositionedEvent(position: position, event: LedgerEvent(id: id, stream: stream, at: at, source: source, data: data)))
        }
        func time() -> Instant {
            // Coarse times around the request (some before it), up to past the 12 h cap.
            t0.adding(milliseconds: Int64.random(in: -4...60, using: &rng) * 15 * 60_000)
        }
        let stale = Bool.random(using: &rng) ? t0.adding(hours: Int64.random(in: 1...9, using: &rng)) : nil
        let pushTypes: [PushType?] = [nil, .token, .channel("c1"), PushType.none]
        let requestAt = Bool.random(using: &rng) ? t0 : time()
        add(
            .activity("A"), requestAt,
            .request(
                RequestData(
                    attributesType: "T", attributes: ["k": "v"],
                    content: ActivityContent(state: ["s": 0], staleDate: stale),
                    pushType: pushTypes.randomElement(using: &rng)!,
                    scheduledStart: Bool.random(using: &rng) ? requestAt.adding(hours: 1) : nil)))
        let streams: [StreamName] = [
            .activity("A"), .activity("A"), .activity("A"), .channel("c1"), .channel("c2"), .activity("B"),
        ]
        for _ in 0..<Int.random(in: 5...60, using: &rng) {
            let at = time()
            let ts = at.seconds + Int64.random(in: -3600...3600, using: &rng)
            stamps.append(ts)
            let stream = streams.randomElement(using: &rng)!
            let content = ActivityContent(state: ["s": .int(ts)], staleDate: Bool.random(using: &rng) ? stale : at.adding(hours: 2))
            switch Int.random(in: 0..<16, using: &rng) {
            case 0...3: add(stream, at, .update(UpdateData(content: content, timestamp: ts)))
            case 4:
                let policies: [DismissalPolicy?] = [nil, .default, .immediate, .after(at.adding(hours: 2)), .after(at.adding(hours: 9))]
                add(stream, at, .end(EndData(content: Bool.random(using: &rng) ? content : nil, timestamp: ts,
                                             dismissalPolicy: policies.randomElement(using: &rng)!)),
                    source: Bool.random(using: &rng) ? .app : .server)
            case 5: add(.activity("A"), at, .dismiss(DismissData(by: .user)), source: .app)
            case 6, 7:
                let status = [200, 200, 410, 429].randomElement(using: &rng)!
                let token: String? = Bool.random(using: &rng) ? "aa" : nil
                // A 410 dates the death when it was pushed, an hour before, or (hostile) an hour after.
                let death = status == 410 ? [nil, at.adding(hours: -1), at.adding(hours: 1)].randomElement(using: &rng)! : nil
                add(stream, at, .push(PushData(refersTo: ids.randomElement(using: &rng)!, status: status, token: token,
                                               apnsTimestamp: death)))
            case 8:
                // Often a timestamp that some content carried, with its hash, a wrong hash or none.
                let seen = stamps.randomElement(using: &rng) ?? ts
                let hashes = [nil, ActivityContent(state: ["s": .int(seen)]).contentHash, "00"]
                add(
                    .activity("A"), at,
                    .observe(
                        ObserveData(
                            activityState: .active, contentTimestamp: Bool.random(using: &rng) ? seen : ts,
                            contentHash: hashes.randomElement(using: &rng)!)),
                    source: .device)
            case 9:
                let phase = [Phase.ended, .dismissed, .active].randomElement(using: &rng)!
                add(.activity("A"), at, .observe(ObserveData(activityState: phase)), source: .device)
            case 10: add(.activity("A"), at, .token(TokenData(token: Bool.random(using: &rng) ? "aa" : "bb\(events.count)")))
            case 11, 12:
                let channel = Bool.random(using: &rng) ? "c1" : "c2"
                add(.channel(channel), at, .subscribe(SubscribeData(activity: Bool.random(using: &rng) ? "A" : "B")))
            case 13: add(.installation("I"), at, .startToken(TokenData(token: "st")))
            case 14: add(.activity("A"), at, .reconcile(ReconcileData(run: "r", action: .none)))
            default:
                // A second request on the same stream is counted but never replaces the first.
                add(.activity("A"), at, .request(RequestData(attributesType: "T2", attributes: [:], content: content)))
            }
        }
        return events.shuffled(using: &rng)
    }

    @Test("the one-pass timeline equals folding every prefix from scratch", arguments: 0..<400)
    func equalsRefolding(seed: Int) {
        let events = Self.history(seed: UInt64(seed))
        var rng = SeededGenerator(seed: UInt64(seed) &+ 77)
        let to = Self.t0.adding(milliseconds: Int64.random(in: -2...64, using: &rng) * 15 * 60_000)
        let from: Instant? = Bool.random(using: &rng) ? Self.t0.adding(hours: Int64.random(in: -1...10, using: &rng)) : nil
        let fast = ActivityFold.timeline(activity: "A", events: events, from: from, to: to)
        let oracle = ActivityFold.timelineByRefolding(activity: "A", events: events, from: from, to: to)
        let cards = ActivityFold.timelineCards(activity: "A", events: events, from: from, to: to)
        #expect(cards.map(\.event) == oracle.map(\.event) && cards.map(\.card) == oracle.map { ActivityCard($0.state) })
        #expect(fast.count == oracle.count, "seed \(seed)")
        for (a, b) in zip(fast, oracle) where a != b {
            Issue.record("seed \(seed): entry \(a.event.event.id ?? "?") differs:\n\(a.state)\nvs\n\(b.state)")
            break
        }
        // The generator must reach what the walk does: entries, channel entries, deadlines, stale content.
        #expect(fast == oracle)
    }

    @Test("the walk's candidate flags equal recomputing them after every event", arguments: 0..<200)
    func candidateFlags(seed: Int) {
        let ordered = ActivityTimeline.ordered(Self.history(seed: UInt64(seed)), asOf: Self.t0.adding(hours: 20))
        guard let request = ActivityTimeline.request(of: "A", in: ordered) else { return }
        var walk = ActivityTimeline(activity: "A", request: request.event, data: request.data, asOf: request.event.event.at)
        walk.tracksDisplayed = true
        for event in ordered where ActivityTimeline.isRelevant(event.event, activity: "A") {
            walk.append(event)
            let recomputed = walk.deliveries.indices.map { walk.isCandidate($0, before: .max) }
            #expect(walk.eligible == recomputed, "seed \(seed), after \(event.event.id ?? "?")")
        }
    }

    @Test("a finished walk's attempt index answers every limit as looking the attempts up does", arguments: 0..<200)
    func attemptIndex(seed: Int) throws {
        let events = Self.history(seed: UInt64(seed))
        guard let plain = try? ActivityTimeline(activity: "A", events: events, asOf: Self.t0.adding(hours: 20)) else { return }
        var indexed = plain
        indexed.indexAttempts()
        for d in plain.deliveries.indices {
            for limit in Array(0...(plain.events.count + 1)) + [.max] {
                #expect(indexed.isCandidate(d, before: limit) == plain.isCandidate(d, before: limit), "seed \(seed) d \(d) limit \(limit)")
            }
        }
    }

    @Test("the state as of any time is the last card at or before it (the incident report's slider)", arguments: 0..<150)
    func cardsCoverEveryChange(seed: Int) throws {
        let events = Self.history(seed: UInt64(seed))
        var rng = SeededGenerator(seed: UInt64(seed) &+ 5)
        let from = Self.t0.adding(milliseconds: Int64.random(in: -3...8, using: &rng) * 3_600_000)
        let to = from.adding(hours: Int64.random(in: 1...16, using: &rng))
        let cards = ActivityFold.cards(activity: "A", events: events, from: from, to: to)
        #expect(zip(cards, cards.dropFirst()).allSatisfy { $0.asOf < $1.asOf })
        for _ in 0..<60 {
            let at = from.adding(milliseconds: Int64.random(in: 0...(to.milliseconds - from.milliseconds), using: &rng))
            let folded = (try? ActivityFold.state(activity: "A", events: events, asOf: at)).map(ActivityCard.init)
            guard var card = cards.last(where: { $0.asOf <= at }) else {
                #expect(folded == nil, "seed \(seed): no card at \(at.rfc3339) but the fold has a state")
                continue
            }
            // What the page shows is the card as taken at its own moment: whether the token is dead there too.
            #expect(card.tokenIsDead == folded?.tokenIsDead, "seed \(seed) at \(at.rfc3339): token death")
            card.asOf = at
            #expect(card == folded, "seed \(seed) at \(at.rfc3339)")
        }
    }

    @Test("generated histories cover channel entries, every phase and skipped foreign subscribes")
    func generatorCoverage() {
        var phases: Set<Phase> = []
        var channelEntries = 0
        for seed in 0..<400 {
            let events = Self.history(seed: UInt64(seed))
            let entries = ActivityFold.timeline(activity: "A", events: events, to: Self.t0.adding(hours: 16))
            phases.formUnion(entries.map(\.state.phase))
            channelEntries += entries.filter { $0.event.event.stream.kind == .channel }.count
        }
        #expect(phases.isSuperset(of: [.active, .stale, .ended, .dismissed, .pending]))
        #expect(channelEntries > 100)
    }

    /// A few events pushed many times each: retries that fail and succeed, 410s whose token death is new, earlier
    /// or later than one already known, pushes to a replaced token and after the end, observations between them.
    static func pushHeavyHistory(seed: UInt64) -> [PositionedEvent] {
        var rng = SeededGenerator(seed: seed)
        var events: [PositionedEvent] = []
        func add(_ at: Instant, _ data: EventData, source: Source = .server) {
            let position = Int64(events.count + 1) * 13 % 2_003 + 1
            events.append(
                PositionedEvent(
                    position: position,
                    event: LedgerEvent(id: "e\(events.count + 1)", stream: .activity("A"), at: at, source: source, data: data)))
        }
        func minutes(_ m: Int64) -> Instant { t0.adding(milliseconds: m * 60_000) }
        add(t0, .request(RequestData(
            attributesType: "T", attributes: [:], content: ActivityContent(state: ["s": 0]),
            pushType: Bool.random(using: &rng) ? .token : nil)))
        add(minutes(1), .token(TokenData(token: "aa")))
        var carried = ["e1"]
        for u in 1...3 {
            let ts = t0.seconds + Int64(u) * 60
            add(minutes(Int64(u) + 1), .update(UpdateData(content: ActivityContent(state: ["s": .int(ts)]), timestamp: ts)))
            carried.append("e\(events.count)")
        }
        if Bool.random(using: &rng) {
            let ts = t0.seconds + 600
            add(minutes(Int64.random(in: 30...600, using: &rng)), .end(EndData(
                content: ActivityContent(state: ["s": .int(ts)]), timestamp: ts, dismissalPolicy: .default)))
            carried.append("e\(events.count)")
        }
        for _ in 0..<Int.random(in: 120...260, using: &rng) {
            // On a 10-minute grid, so that attempts share their `at` with each other and with the deaths 410s date.
            let at = minutes(2 + 10 * Int64.random(in: 0...71, using: &rng))
            switch Int.random(in: 0..<20, using: &rng) {
            case 0:
                add(at, .token(TokenData(token: "bb")))
            case 1:
                let seen = t0.seconds + Int64.random(in: 0...3, using: &rng) * 60
                add(at, .observe(ObserveData(activityState: .active, contentTimestamp: seen)), source: .device)
            default:
                let status = [200, 429, 500, 410, 410].randomElement(using: &rng)!
                let death: Instant? =
                    status == 410 ? [nil, at.adding(hours: -2), at.adding(hours: 1)].randomElement(using: &rng)! : nil
                add(at, .push(PushData(
                    refersTo: carried.randomElement(using: &rng)!, status: status,
                    token: ["aa", "bb", nil].randomElement(using: &rng)!, apnsTimestamp: death)))
            }
        }
        return events.shuffled(using: &rng)
    }

    @Test("many attempts of a few events: the walk's best attempts equal looking every attempt up", arguments: 0..<40)
    func manyAttempts(seed: Int) {
        let events = Self.pushHeavyHistory(seed: UInt64(seed))
        let to = Self.t0.adding(hours: 14)
        let ordered = ActivityTimeline.ordered(events, asOf: to)
        guard let request = ActivityTimeline.request(of: "A", in: ordered) else { return }
        var walk = ActivityTimeline(activity: "A", request: request.event, data: request.data, asOf: request.event.event.at)
        walk.tracksDisplayed = true
        walking: for event in ordered where ActivityTimeline.isRelevant(event.event, activity: "A") {
            walk.append(event)
            let recomputed = walk.deliveries.indices.map { walk.isCandidate($0, before: .max) }
            if walk.eligible != recomputed {
                Issue.record("seed \(seed): candidate flags differ after \(event.event.id ?? "?")")
                break
            }
            for id in walk.pushesByRef.keys {
                let kept = [false, true].map { walk.currentBest(id, carryingEnd: $0) }
                let looked = [false, true].map { walk.bestOutcome(carryingEnd: $0, id: id, before: .max) }
                let tally = walk.attemptTallies[id].map { [$0.successes, $0.successesCarryingEnd] }
                let counted = [false, true].map { ends in
                    walk.pushesByRef[id, default: []].count { walk.outcome(of: walk.pushes[$0], carryingEnd: ends) == .success }
                }
                if kept != looked || tally != counted {
                    Issue.record(
                        "seed \(seed): best attempts of \(id) after \(event.event.id ?? "?"): \(kept), looked up \(looked); successes \(String(describing: tally)), counted \(counted)")
                    break walking
                }
            }
        }
        let fast = ActivityFold.timeline(activity: "A", events: events, to: to)
        #expect(fast == ActivityFold.timelineByRefolding(activity: "A", events: events, to: to), "seed \(seed)")
    }

    @Test("push-heavy histories reach token deaths, the end and dozens of attempts of one event")
    func pushHeavyCoverage() throws {
        var deaths = 0, ended = 0, most = 0
        for seed in 0..<40 {
            let walk = try ActivityTimeline(
                activity: "A", events: Self.pushHeavyHistory(seed: UInt64(seed)), asOf: Self.t0.adding(hours: 14))
            if !walk.deaths.isEmpty { deaths += 1 }
            if walk.overAt != nil { ended += 1 }
            most = max(most, walk.pushesByRef.values.map(\.count).max() ?? 0)
        }
        #expect(deaths > 20 && ended > 20 && most > 40)
    }

    @Test("an activity without a request has an empty timeline; one requested after `to` too")
    func noRequest() {
        let events = Self.history(seed: 3)
        #expect(ActivityFold.timeline(activity: "Z", events: events, to: Self.t0.adding(hours: 20)).isEmpty)
        #expect(ActivityFold.timeline(activity: "A", events: events, to: Self.t0.adding(hours: -5)).isEmpty)
    }
}
