import Foundation
import LedgerTesting
import Testing

/// The CLI and the HTTP API are two renderings of one typed `Ledger` answer: for the same question about the same
/// file, `activity-ledger … --json` prints exactly the bytes the server sends (plus the CLI's closing newline).
/// The content state keeps its key order and number literals (`-0.0`, a 20-digit integer), which SPEC's
/// `contentHash` covers as sent.
@Suite("CLI --json and HTTP bodies are the same bytes")
struct CLIParityTests {
    static let state = #"{"zz":"late","aa":-0.0,"mm":12345678901234567890}"#
    static let asOf = "2026-11-20T21:30:00Z"

    @Test("state, timeline, audits, activities, resync, nightly report, verify and digest")
    func sameBytes() async throws {
        let runner = try #require(CommandRunner("activity-ledger"), "activity-ledger not built next to the tests")
        let service = try TestService()
        let app = TestService.app
        try await service.test { client in
            let batch = """
                {"events":[
                {"id":"p-1","stream":"activity:P1","type":"request","at":"2026-11-20T21:00:00Z","data":{"attributesType":"RideAttributes","attributes":{"ride":"P1","fare":1.50},"content":{"state":\(Self.state)},"installation":"I-9"}},
                {"id":"p-2","stream":"activity:P1","type":"token","at":"2026-11-20T21:00:01Z","data":{"token":"abc123","environment":"production"}},
                {"id":"p-3","stream":"activity:P1","type":"update","at":"2026-11-20T21:05:00Z","data":{"content":{"state":\(Self.state)},"timestamp":1763672700}},
                {"id":"p-4","stream":"activity:P2","type":"request","at":"2026-11-20T21:01:00Z","data":{"attributesType":"RideAttributes","attributes":{"ride":"P2"},"content":{"state":{"eta":7}}}},
                {"id":"p-5","stream":"activity:P2","type":"end","at":"2026-11-20T21:20:00Z","data":{"content":{"state":{"eta":0}},"timestamp":1763673600}}
                ]}
                """
            let appended = try await client.post("/v1/batches", key: service.ingest, batch)
            #expect(appended.status == 200, "\(appended.text)")

            let snapshot = #"{"installation":"I-9","at":"2026-11-20T21:10:00Z","activities":[{"activity":"P1","attributesType":"RideAttributes","activityState":"active","contentTimestamp":1763672700,"pushToken":"def456"}]}"#
            let planned = try await client.post("/v1/resync", key: service.ingest, snapshot)
            #expect(planned.status == 200, "\(planned.text)")
            // The device's token differs from the ledger's: rebind (HTTP dropped `pushToken`, planning without it).
            #expect(planned.json?["actions"]?.arrayValue?.first?["action"]?.stringValue == "rebind", "\(planned.text)")
            let truth = #"{"activity":"P1","state":{"eta":1},"done":false}"# + "\n" + #"{"activity":"P2","done":true}"#
            let started = try await client.post(
                "/v1/reconciliations?run=night-1&at=\(Self.asOf)", key: service.admin, truth,
                contentType: "application/x-ndjson")
            #expect(started.status == 200, "\(started.text)")

            let directory = TemporaryDirectory()
            let snapshotFile = directory.path + "/snapshot.json"
            let truthFile = directory.path + "/truth.jsonl"
            try Data(snapshot.utf8).write(to: URL(fileURLWithPath: snapshotFile))
            try Data(truth.utf8).write(to: URL(fileURLWithPath: truthFile))
            let db = ["--db", service.temporary.path]
            let questions: [(cli: [String], http: String)] = [
                (["state", "P1", "--at", Self.asOf, "--app", app], "/v1/activities/P1/state?at=\(Self.asOf)"),
                (["timeline", "P1", "--app", app], "/v1/activities/P1/timeline"),
                (["audit", "P1", "--at", Self.asOf, "--app", app], "/v1/activities/P1/audit?at=\(Self.asOf)"),
                (["audit", "--update", "p-3", "--at", Self.asOf, "--app", app], "/v1/updates/p-3/audit?at=\(Self.asOf)"),
                (["activities", "--at", Self.asOf, "--limit", "1", "--app", app], "/v1/activities?at=\(Self.asOf)&limit=1"),
                (["reconcile", "resync", "--snapshot", snapshotFile, "--app", app], "/v1/resync"),
                (["reconcile", "nightly", "--truth", truthFile, "--run-id", "night-1", "--app", app],
                 "/v1/reconciliations/night-1"),
                (["verify"], "/v1/verify"),
                (["digest"], "/v1/digest"),
            ]
            for question in questions {
                let printed = try runner.run(question.cli + db + ["--json"])
                #expect(printed.status == 0, "\(question.cli): \(printed.stderr)")
                let answered = question.http == "/v1/resync"
                    ? try await client.post("/v1/resync", key: service.ingest, snapshot)
                    : try await client.get(question.http, key: service.admin)
                #expect(answered.status == 200, "\(question.http): \(answered.text)")
                #expect(printed.stdout == answered.text + "\n", "\(question.cli) printed\n\(printed.stdout)\nHTTP sent\n\(answered.text)")
            }
            // The next page of the list: the cursor one interface printed, the other accepts.
            let first = try runner.run(["activities", "--at", Self.asOf, "--limit", "1", "--app", app, "--json"] + db)
            let cursor = try #require(try JSONValue(json: Data(first.stdout.utf8))["nextCursor"]?.stringValue)
            let second = try runner.run(["activities", "--at", Self.asOf, "--limit", "1", "--after", cursor, "--app", app, "--json"] + db)
            let secondHTTP = try await client.get("/v1/activities?at=\(Self.asOf)&limit=1&cursor=\(cursor)", key: service.read)
            #expect(second.stdout == secondHTTP.text + "\n")
            #expect(secondHTTP.json?["activities"]?.arrayValue?.first?["activity"]?.stringValue == "P2")

            // `report` embeds the incident answer the page reads over HTTP (all but the two "now" times).
            let reportFile = directory.path + "/P1.html"
            let window = ["--from", "2026-11-20T21:00:00Z", "--to", Self.asOf]
            let reported = try runner.run(["report", "P1", "--app", app, "--out", reportFile] + window + db)
            #expect(reported.status == 0, "\(reported.stderr)")
            let html = try String(contentsOfFile: reportFile, encoding: .utf8)
            let start = try #require(html.range(of: #"<script type="application/json" id="incident-data">"#))
            let end = try #require(html.range(of: "</script>", range: start.upperBound..<html.endIndex))
            let embedded = String(html[start.upperBound..<end.lowerBound])
            #expect(embedded.contains(#""state":\#(Self.state)"#), "the report keeps the content as sent")
            let incident = try await client.get(
                "/v1/activities/P1/incident?from=2026-11-20T21:00:00Z&to=\(Self.asOf)", key: service.read)
            func withoutNow(_ text: String) throws -> JSONValue {
                guard case .object(var object) = try JSONValue(json: Data(text.utf8)),
                    case .object(var audit)? = object["audit"]
                else { return .null }
                object["generatedAt"] = .null
                audit["asOf"] = .null
                object["audit"] = .object(audit)
                return .object(object)
            }
            #expect(try withoutNow(embedded) == withoutNow(incident.text))

            // The content state as sent: keys in order, number literals untouched.
            let state = try await client.get("/v1/activities/P1/state?at=\(Self.asOf)", key: service.read)
            #expect(state.text.contains(#""state":\#(Self.state)"#), "\(state.text)")
        }
    }
}
