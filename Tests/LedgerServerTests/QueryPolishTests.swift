import Foundation
import LedgerTesting
import Testing

/// Query parameters each endpoint owns: a cursor is a place in one list only.
@Suite("Query parameters, polished")
struct QueryPolishTests {
    @Test(
        "each list refuses the other list's cursor with 400 naming cursor, and takes its own",
        arguments: TestService.Mode.allCases)
    func cursorsBelongToTheirList(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
            #expect(try await client.post("/v1/batches", key: service.ingest, WebViewTests.events).status == 200)
            let activities = try await client.get("/v1/activities?limit=1", key: service.read)
            let listCursor = try #require(activities.json?["nextCursor"]?.stringValue, "\(activities.text)")
            let audit = try await client.get("/v1/updates/cu/audit?limit=1", key: service.read)
            let auditCursor = try #require(audit.json?["nextCursor"]?.stringValue, "\(audit.text)")

            let foreignInAudit = try await client.get(
                "/v1/updates/cu/audit?limit=1&cursor=\(listCursor)", key: service.read)
            #expect(foreignInAudit.status == 400, "\(foreignInAudit.text)")
            #expect(foreignInAudit.errorField == "cursor", "\(foreignInAudit.text)")
            let foreignInList = try await client.get("/v1/activities?limit=1&cursor=\(auditCursor)", key: service.read)
            #expect(foreignInList.status == 400, "\(foreignInList.text)")
            #expect(foreignInList.errorField == "cursor", "\(foreignInList.text)")

            let nextAudit = try await client.get(
                "/v1/updates/cu/audit?limit=1&cursor=\(auditCursor)", key: service.read)
            #expect(nextAudit.json?["deliveries"]?.arrayValue?.map { $0["activity"]?.stringValue } == ["B"])
            let nextList = try await client.get("/v1/activities?limit=1&cursor=\(listCursor)", key: service.read)
            #expect(nextList.status == 200, "\(nextList.text)")
            #expect(nextList.json?["activities"]?.arrayValue?.map { $0["activity"]?.stringValue } == ["B"])
        }
    }

    @Test("a window whose from is after its to is empty on both doors: timeline bytes agree, incident has no cards")
    func backwardsWindowAgrees() async throws {
        let runner = try #require(CommandRunner("activity-ledger"), "activity-ledger not built next to the tests")
        let service = try TestService()
        try await service.test { client async throws in
            #expect(try await client.post("/v1/batches", key: service.ingest, WebViewTests.events).status == 200)
            let (from, to) = ("2026-11-21T05:00:00Z", "2026-11-21T01:00:00Z")
            let options = ["--from", from, "--to", to, "--app", TestService.app, "--db", service.temporary.path]
            let printed = try runner.run(["timeline", "R1", "--json"] + options)
            let sent = try await client.get("/v1/activities/R1/timeline?from=\(from)&to=\(to)", key: service.read)
            #expect(printed.status == 0 && sent.status == 200, "\(printed.stderr) \(sent.text)")
            #expect(printed.stdout == sent.text + "\n")
            let out = service.temporary.path + ".html"
            let reported = try runner.run(["report", "R1", "--json", "--out", out] + options)
            #expect(reported.status == 0, "\(reported.stderr)")
            #expect(reported.stdout.contains(#""cards":0"#), "\(reported.stdout)")
            let incident = try await client.get(
                "/v1/activities/R1/incident?from=\(from)&to=\(to)", key: service.read)
            #expect(incident.status == 200 && incident.json?["cards"]?.arrayValue?.isEmpty == true, "\(incident.text)")
        }
    }
}
