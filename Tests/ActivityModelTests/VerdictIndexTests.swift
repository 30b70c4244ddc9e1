@testable import ActivityModel
import Testing

/// The verdicts of a whole audit are computed from a `VerdictIndex` (one sweep, O(log n) per delivery); one
/// verdict asked alone (`verdict(of:)`) computes its facts by their definitions. These hold the two equal.
/// Sized to a few seconds of CPU: they run on the cooperative pool beside the storage suites, whose appends and
/// long polls starved when these took ~40 s of it (a fresh-clone CI run failed two timing tests that way).
@Suite("Verdict index")
struct VerdictIndexTests {
    static let t0 = Instant(seconds: 1_795_204_800)

    /// A history with every kind of evidence the verdicts weigh, bunched so that ties are common: timestamps
    /// from a narrow band, few distinct contents (observed hashes that match other updates), attempts that
    /// fail and later succeed, pushes to start, dead tokens, ends, dismissals, observations with and without
    /// a timestamp, a channel the activity subscribes to.
    static func history(seed: UInt64, count: Int) -> [PositionedEvent] {
        var rng = SeededGenerator(seed: seed)
        var events: [PositionedEvent] = []
        func add(_ at: Instant, _ data: EventData, stream: StreamName = .activity("A"), source: Source = .server) {
            events.append(
                PositionedEvent(
                    position: Int64(events.count + 1),
                    event: LedgerEvent(id: "e\(events.count + 1)", stream: stream, at: at, source: source, data: data)))
        }
        func content() -> ActivityContent { ActivityContent(state: ["s": .int(Int64.random(in: 0...3, using: &rng))]) }
        let pushToStart = Bool.random(using: &rng)
        // Sometimes updates (and a channel's subscription) come before the request in the walk.
        var early: [(Instant, EventData, StreamName)] = []
        let requestAt = Bool.random(using: &rng) ? t0 : t0.adding(milliseconds: 24 * 60_000)
        if requestAt > t0 {
            early.append((t0, .subscribe(SubscribeData(activity: "A")), .channel("C")))
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let ts = requestAt.seconds - Int64.random(in: 0...1, using: &rng) * 60
                early.append((t0, .update(UpdateData(content: content(), timestamp: ts)), [.channel("C"), .activity("A")].randomElement(using: &rng)!))
            }
        }
        for (at, data, stream) in early { add(at, data, stream: stream) }
        add(
            requestAt,
            .request(
                RequestData(
                    attributesType: "T", attributes: [:], content: content(),
                    pushType: pushToStart ? .channel("C") : .token)))
        add(t0, .token(TokenData(token: "aa")))
        let band = Int64.random(in: 2...40, using: &rng)
        for _ in 0..<count {
            let at = t0.adding(milliseconds: Int64.random(in: 0...40, using: &rng) * 12 * 60_000)
            let ts = t0.seconds + Int64.random(in: 0...band, using: &rng) * 60
            switch Int.random(in: 0..<20, using: &rng) {
            case 0...5:
                let future = Int.random(in: 0..<30, using: &rng) == 0
                add(at, .update(UpdateData(content: content(), timestamp: future ? ts + 90 * 86_400 : ts)))
            case 6:
                add(at, .update(UpdateData(content: content(), timestamp: ts)), stream: .channel("C"))
            case 7:
                add(at, .end(EndData(content: Bool.random(using: &rng) ? content() : nil, timestamp: ts)))
            case 8...11:
                let status = [200, 200, 200, 410, 429, 400].randomElement(using: &rng)!
                let target = Int.random(in: 1...events.count, using: &rng)
                add(at, .push(PushData(refersTo: "e\(target)", status: status)), source: .apns)
            case 12...15:
                let hash: String? =
                    switch Int.random(in: 0..<3, using: &rng) {
                    case 0: nil
                    default: content().contentHash
                    }
                let phase = [Phase.active, .active, .active, .ended, .dismissed].randomElement(using: &rng)!
                add(at, .observe(ObserveData(activityState: phase, contentTimestamp: ts, contentHash: hash)), source: .device)
            case 16:
                let phase = [Phase.active, .ended, .dismissed].randomElement(using: &rng)!
                add(at, .observe(ObserveData(activityState: phase)), source: .device)
            case 17: add(at, .token(TokenData(token: "t\(events.count)")))
            case 18: add(at, .subscribe(SubscribeData(activity: "A")), stream: .channel("C"))
            default:
                if Int.random(in: 0..<4, using: &rng) == 0 { add(at, .dismiss(DismissData(by: .user)), source: .app) }
            }
        }
        return events
    }

    @Test("every verdict of an audit equals the same verdict asked alone", arguments: 0..<30)
    func auditEqualsOneByOne(seed: Int) {
        let events = Self.history(seed: UInt64(seed), count: 40 + seed * 3)
        for hours in [6, 13] {
            let asOf = Self.t0.adding(hours: Int64(hours))
            let audit = DeliveryVerdicts.audit(activity: "A", events: events, asOf: asOf)
            for delivery in audit {
                let alone = DeliveryVerdicts.verdict(of: delivery.event, activity: "A", events: events, asOf: asOf)
                #expect(alone == delivery, "seed \(seed), \(hours) h: \(delivery.event)")
            }
        }
    }

    @Test("on long histories, the index's facts are the facts by their definitions", arguments: 0..<2)
    func indexedFactsEqualDefinitions(seed: Int) throws {
        let events = Self.history(seed: 1000 + UInt64(seed), count: 500 + seed * 300)
        for hours in [3, 13] {
            var timeline = try ActivityTimeline(activity: "A", events: events, asOf: Self.t0.adding(hours: Int64(hours)))
            timeline.indexAttempts()
            let index = ActivityTimeline.VerdictIndex(timeline)
            for d in timeline.deliveries.indices {
                let defined = timeline.facts(for: timeline.deliveries[d])
                let indexed = index.facts(for: d, in: timeline)
                let context = "seed \(seed), \(hours) h, delivery \(d)"
                #expect(indexed.own?.index == defined.own?.index, "\(context): own")
                #expect(indexed.shownBefore == defined.shownBefore, "\(context): shown before")
                #expect(indexed.newer?.index == defined.newer?.index, "\(context): newer")
                #expect(indexed.contradicting?.index == defined.contradicting?.index, "\(context): contradicting")
            }
        }
    }

    @Test("the tree answers as a scan of its slots does", arguments: 0..<40)
    func treeEqualsScan(seed: Int) {
        var rng = SeededGenerator(seed: UInt64(seed))
        let count = Int.random(in: 1...70, using: &rng)
        var values = [Int64?](repeating: nil, count: count)
        var tree = ExtremaTree(count: count)
        for _ in 0..<300 {
            let slot = Int.random(in: 0..<count, using: &rng)
            let value: Int64? = Bool.random(using: &rng) ? nil : Int64.random(in: -20...20, using: &rng)
            values[slot] = value
            tree.set(slot, value)
            let lower = Int.random(in: 0...count, using: &rng)
            let upper = Int.random(in: lower...count, using: &rng)
            let bound = Int64.random(in: -22...22, using: &rng)
            let inRange = values[lower..<upper].compactMap { $0 }
            #expect(tree.largest(in: lower..<upper) == inRange.max() ?? .min)
            #expect(tree.largest(atMost: bound, in: lower..<upper) == inRange.filter { $0 <= bound }.max() ?? .min)
            #expect(tree.first(from: lower, greaterThan: bound) == (lower..<count).first { (values[$0] ?? .min) > bound })
            #expect(tree.first(from: lower, lessThan: bound) == (lower..<count).first { (values[$0] ?? .max) < bound })
        }
        #expect(ExtremaTree(values).largest(in: 0..<count) == values.compactMap { $0 }.max() ?? .min)
    }
}

@Suite("Displayed content, kept as the walk goes")
struct DisplayedNowTests {
    @Test("the timeline equals a fold of each prefix on histories full of observations", arguments: 0..<12)
    func timelineEqualsRefolding(seed: Int) {
        let events = VerdictIndexTests.history(seed: 5000 + UInt64(seed), count: 30 + seed * 3)
        let to = VerdictIndexTests.t0.adding(hours: 13)
        let timeline = ActivityFold.timeline(activity: "A", events: events, to: to)
        let refolded = ActivityFold.timelineByRefolding(activity: "A", events: events, to: to)
        #expect(timeline.count == refolded.count)
        for (entry, expected) in zip(timeline, refolded) where entry != expected {
            #expect(entry.state.displayed == expected.state.displayed, "seed \(seed), \(entry.event.event.id ?? "")")
            #expect(entry == expected, "seed \(seed), \(entry.event.event.id ?? "")")
            break
        }
    }
}
