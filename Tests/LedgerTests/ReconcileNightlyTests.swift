import ActivityModel
import Foundation
import GRDB
import Ledger
import LedgerStore
import LedgerTesting
import Testing

@Suite("Reconcile: nightly job")
struct ReconcileNightlyTests {
    typealias F = ReconcileFixtures
    /// The run's time: two hours after the rides start.
    static let runAt = F.instant(120)

    /// One case per finding, plus a healthy activity that must not be reported.
    static let ledgerEvents = F.lines(
        // drift: the server's truth was never sent.
        F.request("DRIFT"), F.update("DRIFT", at: 5, state: #"{"eta":3}"#),
        // leaked: the truth says done, the activity is live.
        F.request("LEAK"),
        // expired: started 9 h before the run, no recorded end.
        F.request("EXP", at: -420),
        // deadToken: its only token got a 410.
        F.request("DEAD"), F.token("DEAD", at: 1, token: "dd01"),
        F.push("DEAD", at: 2, refersTo: "x", status: 410, reason: "Unregistered", token: "dd01"),
        // undelivered: the intended update was refused by APNs.
        F.request("UNDL"), F.token("UNDL", at: 1, token: "ee01"),
        F.update("UNDL", at: 5, state: #"{"eta":2}"#, eventID: "20000000-0000-4000-8000-000000000001"),
        F.push("UNDL", at: 6, refersTo: "20000000-0000-4000-8000-000000000001", status: 400, reason: "BadDeviceToken", token: "ee01"),
        // healthy: truth equals the intended content (keys in another order, 3.0 == 3).
        F.request("OK", state: #"{"eta":3,"car":"red"}"#),
        // ended and recorded: nothing to find even though the truth differs.
        F.request("DONE"), F.end("DONE", at: 30))

    static let truth = F.lines(
        F.truth("DRIFT", state: #"{"eta":1}"#), F.truth("LEAK", state: #"{"eta":0}"#, done: true),
        F.truth("UNDL", state: #"{"eta":2}"#), F.truth("OK", state: #"{"car":"red","eta":3.0}"#),
        F.truth("DONE", state: #"{"eta":9}"#), F.truth("GHOST", state: #"{"eta":1}"#))

    static func run(_ temp: TemporaryLedger, truth: String = truth, runID: String = "night-1", strict: Bool = false)
        async throws -> NightlyReport
    {
        try await temp.ledger.nightly(
            truth: try F.reader(truth, in: temp, name: "\(runID)-\(strict).jsonl"), runID: runID, at: runAt,
            strict: strict)
    }

    /// The stored report is written entry by entry (`NightlyReport.compactBytes`) rather than as one tree; it must be
    /// the tree's bytes exactly, also when the run id and an invalid line's reason spell the `actions` member.
    @Test("the report written entry by entry is the JSON of the whole report, byte for byte")
    func reportBytes() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ledgerEvents)
        let truth = Self.truth + "\n" + #"{"activity":"\"actions\":[]","x":"#
        for runID in ["night-1", #""actions":[]"#] {
            var report = try await Self.run(temp, truth: truth, runID: runID)
            #expect(report.entries.count == 6)
            #expect(report.invalidLineCount == 1)
            #expect(report.compactBytes == report.json.compactBytes)
            report.entries = []
            #expect(report.compactBytes == report.json.compactBytes)
            // What a re-run returns was stored through it.
            let again = try await Self.run(temp, truth: truth, runID: runID)
            #expect(again.alreadyRecorded)
        }
    }

    @Test(
        "each finding kind is found on its case, with its action",
        arguments: [
            ("DRIFT", NightlyFinding.drift, ReconcileAction.update), ("LEAK", .leaked, .end), ("EXP", .expired, .cleanup),
            ("DEAD", .deadToken, .rebind), ("UNDL", .undelivered, .update), ("GHOST", .missing, .none),
        ])
    func findingKinds(activity: String, finding: NightlyFinding, action: ReconcileAction) async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ledgerEvents)
        let report = try await Self.run(temp)
        let entry = try #require(report.entries.first { $0.activity == activity })
        #expect(entry.finding == finding, "\(entry.action.reason)")
        #expect(entry.action.action == action)
        #expect((entry.action.payload != nil) == (action == .update || action == .end))
        if let aps = entry.action.payload?["aps"] {
            #expect(aps["timestamp"]?.numberValue?.int64Value == Self.runAt.seconds)
        }
    }

    @Test("only the planted cases are reported, and the summary counts them")
    func nothingElse() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ledgerEvents)
        let report = try await Self.run(temp)
        #expect(report.entries.map(\.activity) == ["DEAD", "DRIFT", "EXP", "GHOST", "LEAK", "UNDL"])
        #expect(report.summary == [.drift: 1, .leaked: 1, .expired: 1, .deadToken: 1, .undelivered: 1, .missing: 1])
        #expect(report.json["summary"] == ["drift": 1, "leaked": 1, "expired": 1, "deadToken": 1, "undelivered": 1, "missing": 1])
        #expect(report.status == .recorded)
        #expect(report.recordedEvents == 6)
    }

    @Test("a null state in the truth is no opinion: no drift, and done still ends a leaked activity")
    func nullStateIsNoOpinion() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ledgerEvents)
        // DRIFT's line has an escaped key, so it is parsed in full; LEAK's is read without a tree.
        let truth = F.lines(
            #"{"activity":"DRIFT","state":null,"n\u006fte":"parsed in full"}"#, F.truth("LEAK", state: "null", done: true))
        let report = try await Self.run(temp, truth: truth)
        #expect(report.entries.first { $0.activity == "DRIFT" } == nil)
        let leak = try #require(report.entries.first { $0.activity == "LEAK" })
        #expect(leak.finding == .leaked)
        // The end carries the intended content (the truth has none to give), as with no state at all.
        #expect(leak.action.payload?["aps"]?["content-state"] != JSONValue.null)
    }

    @Test("drift resends the truth, leaked ends with the final truth")
    func payloads() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ledgerEvents)
        let report = try await Self.run(temp)
        let drift = try #require(report.entries.first { $0.activity == "DRIFT" })
        #expect(drift.action.payload?["aps"]?["content-state"] == ["eta": 1])
        let leak = try #require(report.entries.first { $0.activity == "LEAK" })
        #expect(leak.action.payload?["aps"]?["event"] == "end")
        #expect(leak.action.payload?["aps"]?["content-state"] == ["eta": 0])
        let undelivered = try #require(report.entries.first { $0.activity == "UNDL" })
        #expect(undelivered.token == "ee01")
    }

    @Test("the run is recorded as reconcile events, and re-running it adds nothing and says so")
    func idempotentRun() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ledgerEvents)
        let first = try await Self.run(temp)
        let state = try await temp.ledger.state(activity: "DRIFT", at: Self.runAt)
        #expect(state.counters.reconciles == 1)
        let position = try temp.ledger.store.lastPosition()
        let again = try await Self.run(temp, truth: F.truth("OTHER", state: nil))
        #expect(again.status == .alreadyRecorded)
        #expect(again.json["alreadyRecorded"] == true)
        #expect(again.entries == first.entries)
        #expect(again.summary == first.summary)
        #expect(try temp.ledger.store.lastPosition() == position)
    }

    /// A report is stored as one zstd frame of its text; rows holding the text (recorded before session 37) still
    /// read; a frame altered or cut short is a storage error naming the run, never a crash or a wrong report.
    @Test("the stored report is a zstd frame of its text; the text of older rows reads; a damaged frame is refused")
    func storedReport() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ledgerEvents)
        // Many findings, so that the frame's size says it is compressed.
        let truth = (0..<400).map { F.truth("GHOST-\($0)", state: #"{"eta":\#($0)}"#) }.joined(separator: "\n")
        let first = try await Self.run(temp, truth: Self.truth + "\n" + truth)
        var recorded = first
        recorded.status = .alreadyRecorded
        recorded.recordedEvents = 0
        let text = recorded.json.compactBytes
        let stored = try await temp.ledger.pool.read { db in
            try Row.fetchOne(db, sql: "SELECT typeof(report) AS type, report FROM reconcile_runs")!
        }
        #expect(stored["type"] == "blob")
        let frame = [UInt8](stored["report"] as Data)
        #expect(frame.count * 10 < text.count)
        #expect(try frame.withUnsafeBytes { try ZstdFrame.decompress($0) } == first.json.compactBytes)

        let again = try #require(try await temp.ledger.nightlyReport(run: "night-1"))
        #expect(again.json.compactBytes == text)

        // The text itself, as rows recorded before session 37 hold it.
        try await temp.ledger.pool.write { db in
            try db.execute(
                sql: "UPDATE reconcile_runs SET report = ?", arguments: [String(decoding: first.json.compactBytes, as: UTF8.self)])
        }
        #expect(try #require(try await temp.ledger.nightlyReport(run: "night-1")).json.compactBytes == text)

        for damaged in [
            Array(frame.prefix(frame.count / 2)), frame.enumerated().map { $0.offset == frame.count / 2 ? $0.element ^ 1 : $0.element },
            frame + [0], [0x28, 0xB5, 0x2F, 0xFD],
        ] {
            try await temp.ledger.pool.write { db in
                try db.execute(sql: "UPDATE reconcile_runs SET report = ?", arguments: [Data(damaged)])
            }
            await #expect {
                _ = try await temp.ledger.nightlyReport(run: "night-1")
            } throws: { error in
                (error as? LedgerError)?.code == .storage && "\(error)".contains("report of run night-1 is unreadable")
            }
        }
    }

    @Test("a run cut short after recording its events and before its report records none of them twice when run again")
    func interruptedRunRecordsOnce() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ledgerEvents)
        let first = try await Self.run(temp, runID: "night-cut")
        let position = try temp.ledger.store.lastPosition()
        // What a crash between the last reconcile event and the report leaves.
        try await temp.ledger.pool.write { db in try db.execute(sql: "DELETE FROM reconcile_runs") }
        let again = try await Self.run(temp, runID: "night-cut")
        #expect(again.status == .recorded)
        #expect(again.entries == first.entries)
        #expect(again.recordedEvents == 0)
        #expect(try temp.ledger.store.lastPosition() == position)
        // The run's ids share its first 4 bytes (one narrow range of the id index); another run's do not.
        let other = try await Self.run(temp, runID: "night-other")
        let prefixes = try await temp.ledger.pool.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT hex(substr(id, 1, 4)) FROM events WHERE type = 'reconcile' ORDER BY position
                    """)
        }
        #expect(first.recordedEvents > 1 && other.recordedEvents > 1)
        #expect(prefixes.count == 2)
    }

    @Test("phases are evaluated as of the run's time, not the machine clock")
    func asOfRunTime() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ledgerEvents)
        // One hour after EXP's request nothing had expired yet.
        let early = try await temp.ledger.nightly(
            truth: try F.reader("", in: temp), runID: "early", at: F.instant(-360))
        #expect(early.summary[.expired] == 0)
    }

    @Test("lenient: a bad truth line is reported with its number and skipped")
    func lenientBadLines() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ledgerEvents)
        // An activity id no event could hold (found: it stopped the whole run with the size of its event).
        let long = #"{"activity":""# + String(repeating: "L", count: 300_000) + #""}"#
        let truth = F.lines(F.truth("DRIFT", state: #"{"eta":1}"#), "{not json", #"{"activity":"X","done":"yes"}"#, long)
        let report = try await Self.run(temp, truth: truth)
        #expect(report.status == .recorded)
        #expect(report.invalidLines.map(\.line) == [2, 3, 4])
        #expect(report.invalidLines[1].reason.contains("done"))
        #expect(report.invalidLines[2].reason.contains("longer than 1024 bytes"), "\(report.invalidLines[2].reason)")
        #expect(report.json["invalidLineHandling"] == "skipped")
        #expect(report.summary[.drift] == 1)
    }

    @Test("strict: a bad truth line stops the run before anything is recorded")
    func strictBadLines() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ledgerEvents)
        let position = try temp.ledger.store.lastPosition()
        let truth = F.lines(F.truth("DRIFT", state: #"{"eta":1}"#), "[1,2]")
        let report = try await Self.run(temp, truth: truth, strict: true)
        #expect(report.status == .stopped)
        #expect(report.entries.isEmpty)
        #expect(report.invalidLines.map(\.line) == [2])
        #expect(report.json["invalidLineHandling"] == "stopped")
        #expect(try temp.ledger.store.lastPosition() == position)
        #expect(try await temp.ledger.nightlyReport(run: "night-1") == nil)
        // Nothing was recorded, so the same run id can run again once the feed is fixed.
        let fixed = try await Self.run(temp, truth: F.truth("DRIFT", state: #"{"eta":1}"#), strict: true)
        #expect(fixed.status == .recorded)
    }

    /// More findings than one recording batch (2048), so later pages are scanned while earlier findings are
    /// being recorded (the ghosts sort after every activity, so they come a page of 1024 at a time): every
    /// finding is recorded exactly once, and a re-run adds nothing.
    @Test("findings beyond one recording batch are all recorded once while the scan goes on")
    func manyFindingsRecordedOnce() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.ledgerEvents)
        let ghosts = (0..<5_000).map { F.truth(String(format: "ZGHOST-%05d", $0), state: #"{"eta":1}"#) }
        let truth = ([F.truth("DRIFT", state: #"{"eta":1}"#)] + ghosts).joined(separator: "\n")
        let report = try await Self.run(temp, truth: truth, runID: "night-many")
        #expect(report.summary[.missing] == 5_000)
        #expect(report.entries.count == report.recordedEvents)
        let recorded = try await temp.ledger.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM events WHERE type = 'reconcile'") ?? 0
        }
        #expect(recorded == report.recordedEvents)
        let again = try await Self.run(temp, truth: truth, runID: "night-many")
        #expect(again.status == .alreadyRecorded)
        #expect(try temp.ledger.store.lastPosition() == Int64(Self.ledgerEvents.split(separator: "\n").count + recorded))
    }
}
