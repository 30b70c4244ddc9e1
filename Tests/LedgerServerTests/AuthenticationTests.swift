import Foundation
import HTTPTypes
import Ledger
import LedgerServer
import Testing

/// API keys, their scopes and the app each belongs to, through the in-process router and a live server.
@Suite("API keys, scopes and app scoping")
struct AuthenticationTests {
    @Test("a request without a key or with an unknown key is refused with 401 in the JSON error shape", arguments: TestService.Mode.allCases)
    func missingOrUnknownKey(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
            let reply = try await client.get("/v1/activities", key: nil)
            #expect(reply.status == 401)
            #expect(reply.errorCode == "unauthorized")
            #expect(reply.errorMessage.contains("missing API key"))
            #expect(reply.errorField == "Authorization")
            let append = try await client.post("/v1/events", key: nil, Sample.request("R1"))
            #expect(append.status == 401)
            #expect(append.errorCode == "unauthorized")
            #expect(try await client.get("/v1/activities", key: "al_notakey").status == 401)
        }
        #expect(try service.storedIDs().isEmpty)
    }

    @Test("a revoked key is 401, and a good key may have extra blanks after Bearer", arguments: TestService.Mode.allCases)
    func revokedKey(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
            #expect(try await client.get("/v1/activities", key: service.revoked).status == 401)
            #expect(try await client.get("/v1/activities", key: service.read).status == 200)
            // Extra spaces or a tab between "Bearer" and the key are not part of it.
            #expect(try await client.get("/v1/activities", key: "  \t\(service.read)").status == 200)
        }
    }

    @Test("a key revoked while the server runs stops working once the cache lets go of it", arguments: TestService.Mode.allCases)
    func revokedWhileRunning(mode: TestService.Mode) async throws {
        var service = try TestService()
        service.configuration.apiKeyCacheTTL = .milliseconds(100)
        let keys = service.keys
        let (secret, key) = try keys.create(app: TestService.app, scopes: [.read])
        try await service.test(mode.setup) { client async throws in
            #expect(try await client.get("/v1/activities", key: secret).status == 200)
            try keys.revoke(id: key.id)
            try await Task.sleep(for: .milliseconds(150))
            #expect(try await client.get("/v1/activities", key: secret).status == 401)
        }
    }

    @Test("a key without the route's scope gets 403, checked before the body is parsed", arguments: TestService.Mode.allCases)
    func wrongScope(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
            let append = try await client.post("/v1/events", key: service.read, "not even json")
            #expect(append.status == 403)
            #expect(append.errorCode == "forbidden")
            #expect(append.errorMessage.contains("ingest"))
            #expect(append.errorField == "Authorization")
            #expect(try await client.post("/v1/events", key: service.read, Sample.request("R1")).status == 403)
            #expect(try await client.get("/v1/feed", key: service.ingest).status == 403)
            #expect(try await client.get("/v1/activities/R1/state", key: service.ingest).status == 403)
            #expect(try await client.get("/v1/verify", key: service.read).status == 403)
            #expect(try await client.get("/v1/digest", key: service.ingest).status == 403)
            #expect(try await client.get("/v1/reconciliations/x", key: service.read).status == 403)
        }
        #expect(try service.storedIDs().isEmpty)
    }

    @Test("admin implies ingest and read", arguments: TestService.Mode.allCases)
    func adminImpliesEverything(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
            #expect(try await client.post("/v1/events", key: service.admin, Sample.request("R1")).status == 200)
            #expect(try await client.get("/v1/activities/R1/state", key: service.admin).status == 200)
        }
    }

    @Test("another app's key gets 404 for the activity, writes only in its own namespace, and sees none of it", arguments: TestService.Mode.allCases)
    func otherAppIsolated(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
            _ = try await client.post("/v1/events", key: service.ingest, Sample.request("R1", id: "a-1"))
            _ = try await client.post("/v1/events", key: service.ingest, Sample.update("R1", id: "a-2"))
            let other = service.otherAdmin
            for path in ["state", "timeline", "audit"] {
                let reply = try await client.get("/v1/activities/R1/\(path)", key: other)
                #expect(reply.status == 404, "\(path): \(reply.text)")
            }
            #expect(try await client.get("/v1/updates/a-2/audit", key: other).status == 404)
            let before = try await client.get("/v1/feed", key: other)
            #expect(before.json?["events"]?.arrayValue?.isEmpty == true, "\(before.text)")
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

    @Test("an APNs exchange by another app's key is 404 and neither lands on nor names this app's activity", arguments: TestService.Mode.allCases)
    func otherAppAPNs(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
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

    @Test("health and metrics need no key", arguments: TestService.Mode.allCases)
    func openEndpoints(mode: TestService.Mode) async throws {
        try await TestService().test(mode.setup) { client async throws in
            let health = try await client.get("/health", key: nil)
            #expect(health.status == 200)
            #expect(health.json?["status"]?.stringValue == "ok")
            #expect(try await client.get("/metrics", key: nil).status == 200)
        }
    }
}
