import Foundation
import LedgerServer
import Testing

@Suite("Resync, nightly runs, verify and digest")
struct ReconciliationTests {
    @Test("a resync snapshot returns the plan")
    func resync() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            let snapshot =
                #"{"installation":"I1","at":"2026-11-20T21:14:03Z","activities":[{"activity":"X","attributesType":"RideAttributes","activityState":"active","contentTimestamp":1763672400}]}"#
            let reply = try await client.post("/v1/resync", key: service.ingest, snapshot)
            #expect(reply.status == 200)
            #expect(reply.json?["installation"]?.stringValue == "I1")
            #expect(reply.json?["actions"]?.arrayValue?.first?["action"]?.stringValue == "adopt")
            let bad = try await client.post(
                "/v1/resync", key: service.ingest, #"{"installation":"I1","at":1,"activities":[{"activity":"X"}]}"#)
            #expect(bad.status == 400)
            #expect(bad.errorField == "activities[0].attributesType")
        }
    }

    @Test("a nightly run takes a JSON Lines truth upload and its report can be fetched again")
    func nightlyRun() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            let truth = """
                {"activity":"R1","state":{"eta":1},"done":false,"at":"2026-11-20T21:00:00Z"}
                {"activity":"R2","state":{"eta":2},"done":true,"at":"2026-11-20T21:00:00Z"}
                """
            let reply = try await client.post(
                "/v1/reconciliations?run=night-1&at=2026-11-21T03:00:00Z", key: service.admin, truth,
                contentType: "application/x-ndjson"
            )
            #expect(reply.status == 200)
            #expect(reply.json?["run"]?.stringValue == "night-1")
            #expect(reply.json?["summary"]?["missing"]?.intValue == 2)
            // The stored report: the same findings and actions, told as already recorded.
            let fetched = try await client.get("/v1/reconciliations/night-1", key: service.admin)
            #expect(fetched.json?["run"] == reply.json?["run"])
            #expect(fetched.json?["summary"] == reply.json?["summary"])
            #expect(fetched.json?["actions"] == reply.json?["actions"])
            #expect(fetched.json?["alreadyRecorded"] == .bool(true))
        }
    }

    @Test("a bad truth line is listed with its line number and skipped; a missing run id is 400")
    func badTruth() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            let reply = try await client.post(
                "/v1/reconciliations?run=n2", key: service.admin, "{\"activity\":\"R1\"}\nnot json\n",
                contentType: "application/x-ndjson"
            )
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.json?["invalidLineCount"]?.intValue == 1, "\(reply.text)")
            #expect(reply.json?["invalidLines"]?.arrayValue?.first?["line"]?.intValue == 2, "\(reply.text)")
            #expect(reply.json?["summary"]?["missing"]?.intValue == 1)
            let noRun = try await client.post(
                "/v1/reconciliations", key: service.admin, "{}", contentType: "application/x-ndjson"
            )
            #expect(noRun.status == 400)
        }
    }

    @Test("verify and digest answer for admin keys")
    func verifyAndDigest() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            let verify = try await client.get("/v1/verify", key: service.admin)
            #expect(verify.json?["ok"] == .bool(true))
            #expect(verify.json?["firstBadPosition"] == .null)
            let digest = try await client.get("/v1/digest", key: service.admin)
            #expect(digest.json?["hash"]?.stringValue?.count == 64)
        }
    }
}
