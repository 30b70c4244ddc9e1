import ActivityModel
import Foundation
import GRDB
import Ledger
import LedgerStore
import LedgerTesting
import Testing

/// Names are taken in Unicode NFC only (`Identifier`): Swift compares strings by canonical equivalence where the
/// file compares bytes, so a second spelling of a name was one name to the writer and another to the file (found:
/// "café" composed and decomposed in one batch broke the chain). And a nightly run's report is found only by its
/// own app (found: `com.A/x`'s run `n` and `com.A`'s run `x/n` shared a key).
@Suite("Names: one spelling each, and run keys per app")
struct NameRuleTests {
    typealias F = ReconcileFixtures
    static let composed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    static func dismiss(_ stream: String, id: String? = nil) -> String {
        // The names here need no escaping.
        let idField = id.map { #""id":"\#($0)","# } ?? ""
        return #"{\#(idField)"stream":"\#(stream)","type":"dismiss","at":"2026-11-27T12:00:00Z","data":{"by":"user"}}"#
    }

    static func refusal(_ body: () async throws -> Void) async -> LedgerError? {
        do {
            try await body()
            return nil
        } catch let error as LedgerError {
            return error
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    /// Found by a probe: a 2,690-character name was stored by SQLite and a 503 on PostgreSQL (its B-tree entry
    /// limit), so a ledger holding one could not be copied there. One bound for both.
    @Test("names up to 1024 bytes are kept; a longer stream, installation, attributesType, app or run id is refused naming its field")
    func longNamesRefused() async throws {
        let temp = try TemporaryLedger()
        let edge = String(repeating: "n", count: 1024 - "activity:".utf8.count)
        _ = try await temp.append(Self.dismiss("activity:" + edge), app: "com.A")
        let long = String(repeating: "é", count: 513)  // 1,026 bytes
        let request = { (attributes: String, installation: String) in
            #"{"stream":"activity:R","type":"request","at":"2026-11-27T12:00:00Z","data":{"attributesType":"\#(attributes)","attributes":{},"content":{"state":{}},"installation":"\#(installation)"}}"#
        }
        let refused: [(String, String?, String)] = [
            (Self.dismiss("activity:" + long), "com.A", "events[0].stream"),
            (request(long, "I"), "com.A", "events[0].data.attributesType"),
            (request("T", long), "com.A", "events[0].data.installation"),
            (Self.dismiss("activity:X"), String(repeating: "a", count: 1025), "app"),
        ]
        for (line, app, field) in refused {
            let error = await Self.refusal { try await temp.append(line, app: app) }
            #expect(error?.field == field && error?.message.contains("longer than 1024 bytes") == true, "\(field): \(String(describing: error))")
        }
        // attributesType is a name too (found: one with a NUL was stored, and the backends answered a filter on it
        // differently).
        let nul = await Self.refusal { try await temp.append(request("Ride\\u0000Attributes", "I"), app: "com.A") }
        #expect(nul?.field == "events[0].data.attributesType" && nul?.message.contains("U+0000") == true, "\(String(describing: nul))")
        let run = await Self.refusal {
            _ = try await temp.ledger.nightly(
                truth: try F.reader("", in: temp), runID: String(repeating: "r", count: 201), at: F.instant(120), app: "com.A")
        }
        #expect(run?.field == "run")
        #expect(try await temp.ledger.lastPosition() == 1)
    }

    @Test(
        "a name not in NFC is refused at the door, naming its field, and nothing is written",
        arguments: [
            (dismiss("activity:" + decomposed), "events[0].stream"),
            (dismiss("activity:A", id: "id-" + decomposed), "events[0].id"),
            (#"{"stream":"channel:C","type":"subscribe","at":"2026-11-27T12:00:00Z","data":{"activity":"\#(decomposed)"}}"#,
             "events[0].data.activity"),
        ])
    func decomposedRefused(line: String, field: String) async throws {
        let temp = try TemporaryLedger()
        let error = await Self.refusal { try await temp.append(line, app: "com.A") }
        #expect(error?.code == .badInput)
        #expect(error?.field == field)
        #expect(error?.message.contains("NFC") == true, "\(error?.message ?? "")")
        #expect(try await temp.ledger.lastPosition() == 0)
    }

    @Test("both spellings in one batch: refused whole, and the log still verifies")
    func bothSpellings() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.dismiss("activity:before"))
        let error = await Self.refusal {
            try await temp.append(F.lines(Self.dismiss("activity:" + Self.composed), Self.dismiss("activity:" + Self.decomposed)))
        }
        #expect(error?.field == "events[1].stream")
        #expect(try await temp.ledger.lastPosition() == 1)
        // The composed spelling alone is a name like any other.
        try await temp.append(Self.dismiss("activity:" + Self.composed))
        #expect(try await temp.ledger.verify().ok)
    }

    @Test("an app or a run id not in NFC is refused")
    func appAndRun() async throws {
        let temp = try TemporaryLedger()
        let app = await Self.refusal { try await temp.append(Self.dismiss("activity:A"), app: "com." + Self.decomposed) }
        #expect(app?.field == "app")
        let run = await Self.refusal {
            _ = try await temp.ledger.nightly(
                truth: try F.reader("", in: temp), runID: "n-" + Self.decomposed, at: F.instant(120))
        }
        #expect(run?.field == "run")
    }

    @Test("an expected version for something that is not a stream name is refused", arguments: ["garbage", "", "activity:"])
    func expectedKeys(key: String) async throws {
        let temp = try TemporaryLedger()
        let event = try EventCodec.decode(Self.dismiss("activity:A"))
        let error = await Self.refusal { _ = try await temp.ledger.append([event], expected: [key: .exact(0)]) }
        #expect(error?.field == "expectedVersions")
        #expect(try await temp.ledger.lastPosition() == 0)
    }

    @Test("app com.A/x's run n and app com.A's run x/n are two runs")
    func runKeysPerApp() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(F.request("SECRET"), app: "com.A/x")
        let report = try await temp.ledger.nightly(
            truth: try F.reader(F.truth("SECRET", state: #"{"eta":1}"#), in: temp), runID: "n", at: F.instant(120),
            app: "com.A/x")
        #expect(report.status == .recorded)
        #expect(try await temp.ledger.nightlyReport(run: "n", app: "com.A/x") != nil)
        #expect(try await temp.ledger.nightlyReport(run: "x/n", app: "com.A") == nil)
        let other = try await temp.ledger.nightly(
            truth: try F.reader("", in: temp, name: "empty.jsonl"), runID: "x/n", at: F.instant(120), app: "com.A")
        #expect(other.status == .recorded)
        #expect(other.entries.isEmpty)
    }

    @Test("a report recorded under the old key (<app>/<run>) is still found by its app")
    func legacyKey() async throws {
        let temp = try TemporaryLedger()
        let recorded = try await temp.ledger.nightly(
            truth: try F.reader("", in: temp), runID: "old", at: F.instant(120), app: "com.A")
        let pool = try DatabasePool(path: temp.path)
        try await pool.write { db in
            try db.execute(sql: "UPDATE reconcile_runs SET run = 'com.A/old' WHERE run = ?", arguments: ["com.A\u{1F}old"])
        }
        let found = try #require(try await temp.ledger.nightlyReport(run: "old", app: "com.A"))
        #expect(found.at == recorded.at)
        #expect(try await temp.ledger.nightlyReport(run: "old", app: "com.B") == nil)
        // An app-less run keyed by its bare id (until session 26) is still found without an app.
        _ = try await temp.ledger.nightly(truth: try F.reader("", in: temp, name: "bare.jsonl"), runID: "plain", at: F.instant(120), app: nil)
        try await pool.write { db in
            try db.execute(sql: "UPDATE reconcile_runs SET run = 'plain' WHERE run = ?", arguments: ["\u{1F}plain"])
        }
        #expect(try await temp.ledger.nightlyReport(run: "plain", app: nil) != nil)
    }

    /// Found by a probe: an app-less run was keyed by its bare id, which is also the older form of an app's key, so
    /// app `com.a` read the app-less run `com.a/r7` as its own `r7` and could never record its own `r7`.
    @Test("an app-less run named <app>/<run> is not that app's run")
    func applessRunIsNotAnAppsRun() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(F.request("PLAIN"), app: nil)
        let appless = try await temp.ledger.nightly(
            truth: try F.reader(F.truth("PLAIN", state: #"{"eta":1}"#), in: temp), runID: "com.a/r7", at: F.instant(120),
            app: nil)
        #expect(appless.status == .recorded)
        #expect(try await temp.ledger.nightlyReport(run: "r7", app: "com.a") == nil)
        let own = try await temp.ledger.nightly(
            truth: try F.reader("", in: temp, name: "empty.jsonl"), runID: "r7", at: F.instant(120), app: "com.a")
        #expect(own.status == .recorded)
        #expect(try await temp.ledger.nightlyReport(run: "com.a/r7", app: nil)?.entries.count == appless.entries.count)
    }
}
