import ActivityModel
import Foundation
import GRDB
@testable import Ledger
import LedgerStore
import Logging
import LedgerTesting
import Testing

@Suite("Projections equal a rebuild and the pure fold")
struct ProjectionEquivalenceTests {
    static func dump(_ ledger: Ledger) async throws -> [String] {
        try await ledger.projectionDump()
    }

    @Test("inline projections equal a rebuild byte for byte after a random workload", arguments: [1, 2, 3] as [UInt64])
    func rebuildMatchesInline(seed: UInt64) async throws {
        let temp = try TemporaryLedger()
        let lines = RandomWorkload(seed: seed).lines()
        // Appends in uneven batches, as concurrent clients would.
        var index = 0
        while index < lines.count {
            let size = min(lines.count - index, Int(seed) * 7 + 3)
            try await temp.append(lines[index..<index + size].joined(separator: "\n"))
            index += size
        }
        let inline = try await Self.dump(temp.ledger)
        #expect(inline.count > 40)
        let summary = try await temp.ledger.rebuild()
        #expect(summary.events == Int64(lines.count))
        let rebuilt = try await Self.dump(temp.ledger)
        #expect(inline == rebuilt)
    }

    /// A sealed rebuild decodes each segment with a memo of the last stream (`ProjectionDecoder.StreamMemo`), and a
    /// flush of 256 rows or more hashes their intended states on two threads first: 300 activities of two apps
    /// and the app-less namespace, interleaved, sealed, give the rows the appends made.
    @Test("a rebuild of a sealed log of 300 activities in three namespaces equals the inline projections")
    func sealedRebuildOfManyActivitiesMatchesInline() async throws {
        let temp = try TemporaryLedger()
        let sources: [(app: String?, lines: [String])] = [
            (nil, RandomWorkload(seed: 31, activities: 100, eventsPerActivity: 6).lines()),
            ("com.example.rides", RandomWorkload(seed: 32, activities: 100, eventsPerActivity: 6).lines()),
            ("com.example.scores", RandomWorkload(seed: 33, activities: 100, eventsPerActivity: 6).lines()),
        ]
        for start in stride(from: 0, to: sources.map(\.lines.count).max()!, by: 17) {
            for source in sources where start < source.lines.count {
                let batch = source.lines[start..<min(start + 17, source.lines.count)]
                try await temp.append(batch.joined(separator: "\n"), app: source.app)
            }
        }
        let inline = try await Self.dump(temp.ledger)
        let report = try await temp.ledger.seal()
        #expect(report.events > 1_000)
        let summary = try await temp.ledger.rebuild()
        #expect(summary.activities >= 300)
        #expect(summary.undecodable == 0)
        #expect(try await Self.dump(temp.ledger) == inline)
    }

    /// A rebuild writes out the rows of activities that have gone quiet as it scans
    /// (`ProjectionBatch.flush(quietSince:)`; here every 256 events). In this workload each activity's events
    /// follow one another and the channels' updates come last, so most rows are written long before the scan
    /// ends, and each member a channel update reaches is read back, changed and written again.
    @Test("a rebuild that writes out quiet activities as it scans equals the inline projections, rows and sealed")
    func rebuildWritingQuietRowsMatchesInline() async throws {
        let temp = try TemporaryLedger()
        // Each line to the place of the activity it names (`"A41-<index>"`, also inside a subscribe); the
        // lines of no activity (channel updates, start tokens) after all of them.
        let lines = RandomWorkload(seed: 41, activities: 120, eventsPerActivity: 24).lines()
        let ordered = lines.enumerated().sorted { left, right in
            (Self.activityIndex(left.element), left.offset) < (Self.activityIndex(right.element), right.offset)
        }.map(\.element)
        #expect(ordered.count > 3_000)
        for start in stride(from: 0, to: ordered.count, by: 100) {
            try await temp.append(ordered[start..<min(start + 100, ordered.count)].joined(separator: "\n"))
        }
        let inline = try await Self.dump(temp.ledger)
        let channelUpdates = ordered.filter { Self.activityIndex($0) == .max && $0.contains("\"type\":\"update\"") }
        #expect(channelUpdates.count > 10)
        _ = try await temp.ledger.rebuild(progress: nil, quietEvents: 256)
        #expect(try await Self.dump(temp.ledger) == inline)
        #expect(try await temp.ledger.seal().events > 0)
        _ = try await temp.ledger.rebuild(progress: nil, quietEvents: 256)
        #expect(try await Self.dump(temp.ledger) == inline)
    }

    /// `reconcile` events only count, so a batch counts them into the stored row in place without reading it
    /// (`ProjectionBatch.countInPlace`). Batches here mix them with every neighbour: several for one activity, one
    /// before and one after another event of the same activity, one for an activity with no row (a nightly
    /// `missing` finding), one before that activity's request, in two namespaces; the rows equal a rebuild's,
    /// rows and sealed.
    @Test("reconcile events counted in place equal a rebuild, whatever shares their batch")
    func reconcileCountsMatchRebuild() async throws {
        let temp = try TemporaryLedger()
        let workload = RandomWorkload(seed: 12, activities: 40, eventsPerActivity: 5)
        try await temp.append(workload.lines().joined(separator: "\n"))
        try await temp.append(workload.lines().joined(separator: "\n"), app: "com.example.rides")
        let at = Instant(milliseconds: (workload.start + 40_000) * 1000)
        func reconcile(_ activity: String, _ run: String, _ offset: Int64 = 0) -> LedgerEvent {
            LedgerEvent(
                stream: .activity(activity), at: at.adding(milliseconds: offset), source: .ledger,
                data: .reconcile(ReconcileData(run: run, action: .none, reason: "test", finding: "drift")))
        }
        func token(_ activity: String, _ offset: Int64) -> LedgerEvent {
            LedgerEvent(
                stream: .activity(activity), at: at.adding(milliseconds: offset), source: .app,
                data: .token(TokenData(token: String(repeating: "c", count: 63) + "\(offset % 10)")))
        }
        let request = LedgerEvent(
            stream: .activity("late"), at: at.adding(milliseconds: 9),
            data: .request(
                RequestData(
                    attributesType: "RideAttributes", attributes: [:], content: ActivityContent(state: ["eta": .int(1)]),
                    pushType: .token)))
        for app in [nil, "com.example.rides"] as [String?] {
            _ = try await temp.ledger.append((0..<40).filter { $0 % 2 == 0 }.map { reconcile("A12-\($0)", "r1") }, app: app)
            _ = try await temp.ledger.append(
                [
                    reconcile("A12-1", "r2", -5), reconcile("A12-1", "r3", 7), token("A12-1", 3), reconcile("A12-1", "r4", 1),
                    token("A12-3", 4), reconcile("A12-3", "r2", 2),
                    reconcile("ghost", "r2"), reconcile("ghost", "r3", -1),
                    reconcile("late", "r2", 5), request,
                    reconcile("A12-5", "r2", -86_400_000),
                ], app: app)
        }
        let inline = try await Self.dump(temp.ledger)
        #expect(inline.contains { $0.contains("ghost") })
        _ = try await temp.ledger.rebuild()
        #expect(try await Self.dump(temp.ledger) == inline)
        #expect(try await temp.ledger.seal().events > 0)
        _ = try await temp.ledger.rebuild()
        #expect(try await Self.dump(temp.ledger) == inline)
    }

    /// The activity index a RandomWorkload line names, or Int.max.
    private static func activityIndex(_ line: String) -> Int {
        guard let range = line.range(of: "\"A41-") else { return .max }
        return Int(line[range.upperBound...].prefix { $0.isNumber }) ?? .max
    }

    @Test("the projection's token and attributes type agree with the fold", arguments: [4, 5] as [UInt64])
    func projectionMatchesFold(seed: UInt64) async throws {
        let temp = try TemporaryLedger()
        try await temp.append(RandomWorkload(seed: seed).lines().joined(separator: "\n"))
        let rows = try temp.ledger.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT activity, attributes_type, token, last_at FROM activities WHERE requested_at IS NOT NULL")
        }
        #expect(!rows.isEmpty)
        for row in rows {
            let activity: String = row["activity"]
            let lastAt: Int64 = row["last_at"]
            let state = try await temp.ledger.state(activity: activity, at: Instant(milliseconds: lastAt))
            #expect(state.attributesType == row["attributes_type"] as String)
            #expect(state.token == row["token"] as String?, "activity \(activity)")
        }
    }

    @Test(
        "the nightly facts agree with the fold (newest own time, intended content, failed pushes, observations)",
        arguments: [(4, 30), (7, 3), (8, 6)] as [(UInt64, Int)])
    func nightlyFactsMatchFold(seed: UInt64, eventsPerActivity: Int) async throws {
        let temp = try TemporaryLedger()
        let workload = RandomWorkload(seed: seed, activities: 30, eventsPerActivity: eventsPerActivity)
        try await temp.append(workload.lines().joined(separator: "\n"))
        let rows = try temp.ledger.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT activity, events, facts_at, intended_hash, requests, doubts,
                        push_type = 'channel' OR EXISTS (SELECT 1 FROM channel_members m WHERE m.activity = a.activity)
                            AS channel
                    FROM activities a WHERE requested_at IS NOT NULL
                    """)
        }
        #expect(rows.count == workload.activities)
        var settledContent = 0
        for row in rows {
            let activity: String = row["activity"]
            let factsAt = Instant(milliseconds: row["facts_at"] as Int64)
            let state = try await temp.ledger.state(activity: activity, at: factsAt)
            // facts_at is the newest own time: every own event counts at it, not all of them just before it.
            #expect(state.events == row["events"] as Int, "activity \(activity)")
            let before = try? await temp.ledger.state(activity: activity, at: factsAt.adding(milliseconds: -1))
            #expect((before?.events ?? 0) < row["events"] as Int)
            let doubts = NightlyFacts.Doubt(rawValue: row["doubts"] as Int64)
            let channel: Bool = row["channel"]
            guard !channel else { continue }
            #expect(doubts.contains(.failedPush) == (state.counters.failedPushes > 0), "activity \(activity)")
            #expect(doubts.contains(.observation) == (state.counters.observations > 0), "activity \(activity)")
            let deliveries = try await temp.ledger.read { db in try temp.ledger.relevantEvents(db, key: activity, hashes: false) }
            let verdicts = DeliveryVerdicts.audit(activity: activity, events: deliveries.map(\.positioned), asOf: factsAt)
            if verdicts.contains(where: { ["payloadTooLarge", "futureTimestamp"].contains($0.reason) }) {
                #expect(doubts.contains(.unsendable), "activity \(activity)")
            }
            if row["requests"] as Int == 1, let intended = state.intended {
                #expect(row["intended_hash"] as Data? == NightlyFacts.hash(intended.state), "activity \(activity)")
                settledContent += 1
            }
        }
        #expect(settledContent > 0)
    }

    @Test("a ledger whose projections fell behind catches up when opened")
    func catchUpOnOpen() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(RandomWorkload(seed: 9).lines().joined(separator: "\n"))
        let before = try await Self.dump(temp.ledger)
        try await temp.ledger.pool.write { db in
            try db.execute(sql: """
                DELETE FROM activities; DELETE FROM tokens; DELETE FROM channel_members; DELETE FROM start_tokens;
                DELETE FROM projection_positions
                """)
        }
        let reopened = try Ledger(path: temp.path, logger: .init(label: "test"))
        let after = try await Self.dump(reopened)
        #expect(after == before, "\(Set(after).symmetricDifference(Set(before)).sorted().prefix(6))")
    }
}
