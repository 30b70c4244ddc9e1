import Foundation
import LedgerServer
import Testing

@Suite("App scoping and access errors on the real ledger")
struct LedgerScopingTests {
    @Test("another app's key gets 404 for the activity, writes only in its own namespace, and sees none of it")
    func otherAppIsolated() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            _ = try await client.post("/v1/events", key: service.ingest, Sample.request("R1", id: "a-1"))
            _ = try await client.post("/v1/events", key: service.ingest, Sample.update("R1", id: "a-2"))
            let other = service.otherAdmin
            for path in ["state", "timeline", "audit"] {
                let reply = try await client.get("/v1/activities/R1/\(path)", key: other)
                #expect(reply.status == 404, "\(path): \(reply.text)")
            }
            #expect(try await client.get("/v1/updates/a-2/audit", key: other).status == 404)
            // The same names in another app are that app's own: no refusal that would tell R1 or a-2 exist.
            let append = try await client.post("/v1/events", key: other, Sample.update("R1", id: "a-2"))
            #expect(append.status == 200, "\(append.text)")
            let list = try await client.get("/v1/activities", key: other)
            #expect(list.json?["activities"]?.arrayValue?.isEmpty == true, "\(list.text)")
            let feed = try await client.get("/v1/feed?after=0", key: other)
            #expect(feed.json?["events"]?.arrayValue?.count == 1, "\(feed.text)")
            // The owner still sees exactly its own two events.
            let own = try await client.get("/v1/activities/R1/state", key: service.read)
            #expect(own.json?["events"]?.intValue == 2)
        }
        #expect(try service.storedIDs() == ["a-1", "a-2", "\(TestService.otherApp)/a-2"])
    }

    @Test("an APNs exchange by another app's key is 404 and neither lands on nor names this app's activity")
    func otherAppAPNs() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            let token = #"{"stream":"activity:R1","type":"token","at":"2026-11-20T21:00:01Z","data":{"token":"abcd0123"}}"#
            _ = try await client.post(
                "/v1/batches", key: service.ingest, #"{"events":[\#(Sample.request("R1")),\#(token)]}"#)
            let body = #"""
                {"request":{"token":"abcd0123","headers":{"apns-push-type":"liveactivity"},
                 "payload":{"aps":{"event":"update","timestamp":1795209243,"content-state":{"eta":3}}}},
                 "response":{"status":200,"apnsId":"B1"}}
                """#
            let reply = try await client.post("/v1/apns", key: service.otherAdmin, body)
            #expect(reply.status == 404, "\(reply.text)")
            #expect(!reply.text.contains("R1"), "the answer names the other app's activity: \(reply.text)")
        }
        #expect(try service.storedIDs().count == 2)
    }

    @Test("no key or an unknown key is 401, a key without the scope is 403, an oversized body is 413")
    func accessErrors() async throws {
        let service = try TestService(maxBodyBytes: 2048)
        try await service.test { client async throws in
            let missing = try await client.post("/v1/events", key: nil, Sample.request("R1"))
            #expect(missing.status == 401)
            #expect(missing.errorCode == "unauthorized")
            #expect(try await client.get("/v1/activities", key: "al_unknown").status == 401)
            let readOnly = try await client.post("/v1/events", key: service.read, Sample.request("R1"))
            #expect(readOnly.status == 403)
            #expect(readOnly.errorCode == "forbidden")
            #expect(try await client.get("/v1/activities/R1/state", key: service.ingest).status == 403)
            #expect(try await client.get("/v1/digest", key: service.ingest).status == 403)
            let padding = String(repeating: "x", count: 4096)
            let big = #"{"stream":"activity:R1","type":"request","at":1763672400,"data":{"pad":"\#(padding)"}}"#
            let tooLarge = try await client.post("/v1/events", key: service.ingest, big)
            #expect(tooLarge.status == 413, "\(tooLarge.text)")
            #expect(tooLarge.errorCode == "payloadTooLarge")
        }
        #expect(try service.storedIDs().isEmpty)
    }
}
