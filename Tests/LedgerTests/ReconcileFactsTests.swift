import ActivityModel
import Foundation
import GRDB
@testable import Ledger
import LedgerStore
import LedgerTesting
import Logging
import Testing

/// The nightly job folds only the activities `NightlyFacts` cannot settle; these tests hold it to the report of
/// folding every live activity, over adversarial workloads and run times on both sides of every deadline.
@Suite("Reconcile: the nightly candidate filter changes nothing in the report")
struct ReconcileFactsTests {
    /// Truth about every activity but a few, as of `at`: the intended state (a no-finding case the filter must
    /// settle), another state, no state, done; plus ids the ledger does not have.
    static func truth(_ ledger: Ledger, activities: [String], at: Instant, seed: UInt64) async throws -> String {
        var rng = SeededRandom(seed: seed &* 31 &+ UInt64(at.seconds))
        var lines: [String] = []
        for id in activities {
            let intended = (try? await ledger.state(activity: id, at: at))?.intended?.state.compactString
            switch Int.random(in: 0..<20, using: &rng) {
            case 0: continue
            case 1: lines.append(#"{"activity":"\#(id)","state":{"eta":99},"done":false}"#)
            case 2: lines.append(#"{"activity":"\#(id)","done":false}"#)
            case 3: lines.append(#"{"activity":"\#(id)","state":\#(intended ?? "{}"),"done":true}"#)
            case 4: lines.append(#"{"activity":"M\#(id)","state":{"eta":1},"done":false}"#)
            default: lines.append(#"{"activity":"\#(id)","state":\#(intended ?? #"{"eta":1}"#),"done":false}"#)
            }
        }
        return lines.joined(separator: "\n")
    }

    static func run(_ ledger: Ledger, truth: String, run: String, at: Instant, foldAll: Bool) async throws
        -> NightlyReport
    {
        let path = FileManager.default.temporaryDirectory.path + "/facts-truth-\(UUID().uuidString).jsonl"
        try truth.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await ledger.nightly(
            truth: try JSONLinesReader(path: path), runID: run, at: at, strict: false, app: nil, progress: { _ in },
            foldAll: foldAll)
    }

    @Test(
        "filtered and fold-all nightly reports are equal over random workloads and run times",
        arguments: [(21, 2), (22, 3), (23, 5), (24, 12), (25, 30)] as [(UInt64, Int)])
    func filterEqualsFoldAll(seed: UInt64, eventsPerActivity: Int) async throws {
        var workload = RandomWorkload(seed: seed, activities: 48, eventsPerActivity: eventsPerActivity)
        workload.start = 1_795_000_000
        let lines = workload.lines().joined(separator: "\n")
        let filtered = try TemporaryLedger()
        let reference = try TemporaryLedger()
        _ = try await filtered.append(lines)
        _ = try await reference.append(lines)
        let ids = (0..<workload.activities).map { "A\(seed)-\($0)" }
        var folded = (filtered: 0, reference: 0)
        var findings = 0
        // Before some requests, around the stale dates, across the 8 h system end and the 12 h cap.
        let offsets: [Int64] = [-60, 600, 1_500, 3_600, 7 * 3_600 + 1_800, 8 * 3_600 + 2_000, 13 * 3_600]
        for (index, offset) in offsets.enumerated() {
            let at = Instant(seconds: workload.start + offset)
            let truth = try await Self.truth(reference.ledger, activities: ids, at: at, seed: seed)
            let run = "facts-\(seed)-\(index)"
            let mine = try await Self.run(filtered.ledger, truth: truth, run: run, at: at, foldAll: false)
            let all = try await Self.run(reference.ledger, truth: truth, run: run, at: at, foldAll: true)
            #expect(mine.entries == all.entries, "seed \(seed), at \(at.rfc3339)")
            #expect(mine.summary == all.summary)
            #expect(mine.activitiesScanned == all.activitiesScanned)
            folded.filtered += mine.activitiesFolded
            folded.reference += all.activitiesFolded
            findings += all.entries.count
        }
        #expect(findings > 0)
        if eventsPerActivity <= 3 { #expect(folded.filtered < folded.reference, "the filter settles nothing") }
    }

    @Test("a ledger written before the nightly facts refills them when opened")
    func migrationRefills() async throws {
        let temp = try TemporaryLedger()
        _ = try await temp.append(RandomWorkload(seed: 26, activities: 12, eventsPerActivity: 4).lines().joined(separator: "\n"))
        let before = try await ProjectionEquivalenceTests.dump(temp.ledger)
        // What a file of the previous version looks like: no 103 migration, no facts columns.
        try await temp.ledger.pool.write { db in
            for column in ["facts_at", "intended_at", "intended_position", "intended_hash", "requests", "doubts"] {
                try db.execute(sql: "ALTER TABLE activities DROP COLUMN \(column)")
            }
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'ledger.103_nightly_facts'")
        }
        let reopened = try Ledger(path: temp.path, logger: .init(label: "test"))
        let after = try await ProjectionEquivalenceTests.dump(reopened)
        #expect(after == before, "\(Set(after).symmetricDifference(Set(before)).sorted().prefix(6))")
    }
}

@Suite("Reconcile: a standing expired finding says which run reported it first")
struct ReconcileExpiredRepeatTests {
    typealias F = ReconcileFixtures

    @Test("expired is reported on every run until an end is recorded, marked with the first run that reported it")
    func expiredRepeatsMarked() async throws {
        let temp = try TemporaryLedger()
        _ = try await temp.append(F.lines(F.request("EXP", at: 0), F.request("FRESH", at: 600)))
        func run(_ id: String, at minutes: Int64) async throws -> NightlyReport {
            try await temp.ledger.nightly(
                truth: try F.reader("", in: temp, name: "\(id).jsonl"), runID: id, at: F.instant(minutes))
        }
        let first = try await run("n1", at: 9 * 60)
        #expect(first.entries.map(\.finding) == [.expired])
        #expect(first.entries.first?.reportedBefore == nil)
        #expect(first.entries.first?.json["reportedBefore"] == nil)

        let second = try await run("n2", at: 33 * 60)
        #expect(second.entries.map(\.activity) == ["EXP", "FRESH"])
        #expect(second.entries.map(\.reportedBefore) == ["n1", nil])
        #expect(second.entries.first?.json["reportedBefore"] == "n1")
        #expect(try await temp.ledger.nightlyReport(run: "n2")?.entries.first?.reportedBefore == "n1")

        let third = try await run("n3", at: 57 * 60)
        #expect(third.entries.map(\.reportedBefore) == ["n1", "n2"])

        _ = try await temp.append(F.end("EXP", at: 58 * 60))
        let fourth = try await run("n4", at: 59 * 60)
        #expect(fourth.entries.map(\.activity) == ["FRESH"])
    }
}
