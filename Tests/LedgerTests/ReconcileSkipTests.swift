import ActivityModel
import Foundation
import GRDB
@testable import Ledger
import LedgerStore
import LedgerTesting
import Logging
import Testing

/// The nightly job skips, from the `activities` row alone, every activity with a recorded dismissal or an end by
/// the run's time. `foldAll` keeps that skip, so these tests hold both paths to a plain oracle: every activity
/// folded through `ActivityFold` with every channel event of the ledger, judged by `NightlyRules`, no shortcut.
@Suite("Reconcile: skipping ended and dismissed activities hides no finding")
struct ReconcileSkipTests {
    typealias F = ReconcileFixtures

    /// SPEC §5 by a plain fold of the whole log: what the nightly report must hold, entry for entry.
    static func oracle(_ ledger: Ledger, truth: String, run: String, at: Instant) async throws -> [NightlyEntry] {
        var own: [String: [PositionedEvent]] = [:]
        var channels: [PositionedEvent] = []
        try ledger.store.forEachEvent(after: 0) { recorded in
            let event = PositionedEvent(position: recorded.position, event: try ActivityProjector.decode(recorded))
            switch event.event.stream.kind {
            case .activity: own[event.event.stream.id, default: []].append(event)
            case .channel: channels.append(event)
            case .installation: break
            }
            return true
        }
        let spool = try TruthSpool()
        let path = FileManager.default.temporaryDirectory.path + "/skip-oracle-\(UUID().uuidString).jsonl"
        try truth.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await spool.load(try JSONLinesReader(path: path))
        var items: [String: TruthSpool.Row] = [:]
        for row in try spool.merged().next(limit: 1_000_000) { items[row.activity] = row }

        var entries: [NightlyEntry] = []
        for id in Set(own.keys).union(items.keys) {
            let truth = items[id]
            let events = (own[id] ?? []) + channels
            guard let state = try? ActivityFold.state(activity: id, events: events, asOf: at) else {
                if let truth {
                    let reason =
                        "the truth (line \(truth.line)) names an activity the ledger does not have at \(at.rfc3339)"
                    entries.append(
                        NightlyEntry(finding: .missing, action: .init(activity: id, action: .none, reason: reason)))
                }
                continue
            }
            let deliveries = DeliveryVerdicts.audit(activity: id, events: events, asOf: at)
            // Recorded: a dismissal, or an end that reached it and that the device did not drop by itself.
            let dismissed = (own[id] ?? []).contains { event in
                if case .dismiss = event.event.data { return event.event.at <= at }
                return false
            }
            let ended = deliveries.contains { delivery in
                delivery.type == .end
                    && !(delivery.verdict == .rejected
                        && ["payloadTooLarge", "futureTimestamp"].contains(delivery.reason ?? ""))
            }
            guard
                var entry = NightlyRules.evaluate(
                    state: state, truth: truth, facts: .init(recordedEnd: dismissed || ended), at: at,
                    deliveries: { deliveries })
            else { continue }
            if entry.finding == .expired {
                entry.reportedBefore = NightlyScan.earlierReport(of: .expired, in: own[id] ?? [], run: run)
            }
            entries.append(entry)
        }
        return entries.sorted { NightlyScan.precedes($0.activity, $1.activity) }
    }

    /// Truth that walks every activity through every case across the runs: done, another state, no state,
    /// the intended state, absent; plus ids the ledger does not have.
    static func truth(_ ledger: Ledger, activities: [String], at: Instant, round: Int) async -> String {
        var lines: [String] = []
        for (index, id) in activities.enumerated() {
            let intended = (try? await ledger.state(activity: id, at: at))?.intended?.state.compactString ?? #"{"eta":1}"#
            switch (index + round) % 5 {
            case 0: lines.append(#"{"activity":"\#(id)","state":\#(intended),"done":true}"#)
            case 1: lines.append(#"{"activity":"\#(id)","state":{"eta":99},"done":false}"#)
            case 2: lines.append(#"{"activity":"\#(id)","done":false}"#)
            case 3: lines.append(#"{"activity":"\#(id)","state":\#(intended),"done":false}"#)
            default: if index % 7 == 0 { lines.append(#"{"activity":"M\#(id)","done":true}"#) }
            }
        }
        return lines.joined(separator: "\n")
    }

    @Test(
        "normal and fold-all nightly reports equal a plain fold of every activity, edge ends included",
        arguments: [31, 32, 33] as [UInt64])
    func skipEqualsPlainFold(seed: UInt64) async throws {
        var random = RandomWorkload(seed: seed, activities: 24, eventsPerActivity: 6)
        random.start = 1_795_000_000
        let edges = ReconcileSkipWorkload(seed: seed, start: random.start)
        let lines = (random.lines() + edges.lines()).joined(separator: "\n")
        let normal = try TemporaryLedger()
        let reference = try TemporaryLedger()
        try await normal.append(lines)
        try await reference.append(lines)
        let ids = (0..<random.activities).map { "A\(seed)-\($0)" } + (0..<edges.activities).map(edges.id)
        var hidden: [NightlyFinding: Int] = [:]
        // Before and after the requests and every edge end, across the 8 h system end and the 12 h cap.
        let offsets: [Int64] = [-60, 900, 1_900, 3_700, 2 * 3_600 + 600, 4 * 3_600, 7 * 3_600 + 1_800,
                                8 * 3_600 + 2_000, 9 * 3_600 + 1_200, 10 * 3_600, 13 * 3_600]
        for (round, offset) in offsets.enumerated() {
            let at = Instant(seconds: random.start + offset)
            let truth = await Self.truth(reference.ledger, activities: ids, at: at, round: round)
            let run = "skip-\(seed)-\(round)"
            let expected = try await Self.oracle(reference.ledger, truth: truth, run: run, at: at)
            let all = try await ReconcileFactsTests.run(reference.ledger, truth: truth, run: run, at: at, foldAll: true)
            let mine = try await ReconcileFactsTests.run(normal.ledger, truth: truth, run: run, at: at, foldAll: false)
            let when = "seed \(seed), at \(at.rfc3339)"
            #expect(all.entries == expected, "fold-all, \(when): \(Self.diff(all.entries, expected))")
            #expect(mine.entries == expected, "normal, \(when): \(Self.diff(mine.entries, expected))")
            for entry in expected {
                guard let index = Int(entry.activity.split(separator: "-").last ?? ""), entry.activity.hasPrefix("E"),
                    ReconcileSkipWorkload.droppedKinds.contains(index % ReconcileSkipWorkload.kinds)
                else { continue }
                hidden[entry.finding, default: 0] += 1
            }
        }
        // The workload must reach the gap: findings on activities whose recorded end ended nothing.
        for finding in [NightlyFinding.leaked, .expired, .drift, .undelivered] {
            #expect(hidden[finding, default: 0] > 0, "no \(finding) behind a dropped end (seed \(seed))")
        }
    }

    static func diff(_ got: [NightlyEntry], _ expected: [NightlyEntry]) -> String {
        let extra = Set(got).subtracting(expected).map { "+\($0.activity) \($0.finding)" }
        let lacking = Set(expected).subtracting(got).map { "-\($0.activity) \($0.finding)" }
        return (extra + lacking).sorted().prefix(8).joined(separator: ", ")
    }

    static func end(_ id: String, at minutes: Int64, timestamp: Int64? = nil, state: String? = nil) -> String {
        let content = state.map { #""content":{"state":\#($0)},"# } ?? ""
        return """
            {"stream":"activity:\(id)","type":"end","at":"\(F.time(minutes))",\
            "data":{\(content)"timestamp":\(timestamp ?? F.stamp(minutes))}}
            """
    }

    static let edgeLedger = F.lines(
        F.request("BIG"), end("BIG", at: 30, state: ReconcileSkipWorkload.blob),
        F.request("AHEAD"), end("AHEAD", at: 30, timestamp: F.stamp(30) + 9 * 3_600),
        F.request("MILLIS"), end("MILLIS", at: 30, timestamp: F.stamp(30) * 1000, state: #"{"eta":0}"#),
        F.request("FINE"), end("FINE", at: 30),
        F.request("EARLY", at: 10), end("EARLY", at: 0),
        F.request("LATE"), end("LATE", at: 500),
        F.request("TWOREQ"),
        #"{"stream":"activity:TWOREQ","type":"request","at":"\#(F.time(5))","data":{"attributesType":"RideAttributes","#
            + #""attributes":{},"content":{"state":{}},"pushType":{"channel":"c2"}}}"#,
        #"{"stream":"channel:c2","type":"end","at":"\#(F.time(30))","data":{"timestamp":\#(F.stamp(30))}}"#)

    @Test("an end the device drops, or one the fold never hears of, leaves the activity live, then system-expired")
    func droppedEndsAreFindings() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.edgeLedger)
        let ids = ["AHEAD", "BIG", "EARLY", "FINE", "LATE", "MILLIS", "TWOREQ"]
        let done = ids.map { F.truth($0, state: nil, done: true) }.joined(separator: "\n")
        let hour = try await temp.ledger.nightly(
            truth: try F.reader(done, in: temp, name: "done.jsonl"), runID: "n1", at: F.instant(60))
        #expect(hour.entries.map { "\($0.activity) \($0.finding)" } == [
            "AHEAD leaked", "BIG leaked", "LATE leaked", "MILLIS leaked", "TWOREQ leaked",
        ])
        let late = try await temp.ledger.nightly(
            truth: try F.reader("", in: temp, name: "none.jsonl"), runID: "n2", at: F.instant(9 * 60 + 30))
        #expect(late.entries.map { "\($0.activity) \($0.finding)" } == [
            "AHEAD expired", "BIG expired", "MILLIS expired", "TWOREQ expired",
        ])
        let rows = try temp.ledger.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT activity, ended_at FROM activities ORDER BY activity")
        }
        let ended = Dictionary(uniqueKeysWithValues: rows.map { ($0["activity"] as String, $0["ended_at"] as Int64?) })
        #expect(ended["BIG"] == .some(nil) && ended["AHEAD"] == .some(nil) && ended["MILLIS"] == .some(nil))
        #expect(ended["FINE"] == F.instant(30).milliseconds)
    }

    @Test("a ledger written before 104 forgets the ends the device dropped when opened")
    func migrationRefills() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.edgeLedger)
        let before = try await ProjectionEquivalenceTests.dump(temp.ledger)
        // What a file of the previous version holds: the dropped end marked the row ended.
        try await temp.ledger.pool.write { db in
            try db.execute(
                sql: """
                    UPDATE activities SET ended_at = ?, ended_by = 'server', end_policy = 'default'
                    WHERE activity = 'BIG'
                    """,
                arguments: [F.instant(30).milliseconds])
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'ledger.104_honoured_ends'")
        }
        #expect(try await ProjectionEquivalenceTests.dump(temp.ledger) != before)
        let reopened = try Ledger(path: temp.path, logger: .init(label: "test"))
        let after = try await ProjectionEquivalenceTests.dump(reopened)
        #expect(after == before, "\(Set(after).symmetricDifference(Set(before)).sorted().prefix(6))")
    }
}
