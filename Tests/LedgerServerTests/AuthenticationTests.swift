import Foundation
import HTTPTypes
import Ledger
import LedgerServer
import Testing

@Suite("API keys and scopes")
struct AuthenticationTests {
    @Test("a request without a key is refused with 401 in the JSON error shape")
    func missingKey() async throws {
        try await TestService().test { client async throws in
            let reply = try await client.get("/v1/activities", key: nil)
            #expect(reply.status == 401)
            #expect(reply.errorCode == "unauthorized")
            #expect(reply.errorMessage.contains("missing API key"))
        }
    }

    @Test("an unknown key and a revoked key are both 401")
    func unknownAndRevokedKeys() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            #expect(try await client.get("/v1/activities", key: "al_notakey").status == 401)
            #expect(try await client.get("/v1/activities", key: service.revoked).status == 401)
            #expect(try await client.get("/v1/activities", key: service.read).status == 200)
            // Extra spaces or a tab between "Bearer" and the key are not part of it.
            #expect(try await client.get("/v1/activities", key: "  \t\(service.read)").status == 200)
        }
    }

    @Test("a key revoked while the server runs stops working once the cache lets go of it")
    func revokedWhileRunning() async throws {
        var service = try TestService()
        service.configuration.apiKeyCacheTTL = .milliseconds(100)
        let keys = service.keys
        let (secret, key) = try keys.create(app: TestService.app, scopes: [.read])
        try await service.test { client async throws in
            #expect(try await client.get("/v1/activities", key: secret).status == 200)
            try keys.revoke(id: key.id)
            try await Task.sleep(for: .milliseconds(150))
            #expect(try await client.get("/v1/activities", key: secret).status == 401)
        }
    }

    @Test("a key without the route's scope gets 403, checked before the body is parsed")
    func wrongScope() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            let append = try await client.post("/v1/events", key: service.read, "not even json")
            #expect(append.status == 403)
            #expect(append.errorCode == "forbidden")
            #expect(append.errorMessage.contains("ingest"))
            #expect(try await client.get("/v1/feed", key: service.ingest).status == 403)
            #expect(try await client.get("/v1/verify", key: service.read).status == 403)
            #expect(try await client.get("/v1/digest", key: service.ingest).status == 403)
            #expect(try await client.get("/v1/reconciliations/x", key: service.read).status == 403)
        }
    }

    @Test("admin implies ingest and read")
    func adminImpliesEverything() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            #expect(try await client.post("/v1/events", key: service.admin, Sample.request("R1")).status == 200)
            #expect(try await client.get("/v1/activities/R1/state", key: service.admin).status == 200)
        }
    }

    @Test("a key never sees another app's activities or feed")
    func appIsolation() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            #expect(try await client.post("/v1/events", key: service.ingest, Sample.request("R1")).status == 200)
            #expect(try await client.get("/v1/activities/R1/state", key: service.otherAdmin).status == 404)
            let feed = try await client.get("/v1/feed", key: service.otherAdmin)
            #expect(feed.json?["events"]?.arrayValue?.isEmpty == true)
            #expect(try await client.get("/v1/activities/R1/state", key: service.read).status == 200)
        }
    }

    @Test("health and metrics need no key")
    func openEndpoints() async throws {
        try await TestService().test { client async throws in
            let health = try await client.get("/health", key: nil)
            #expect(health.status == 200)
            #expect(health.json?["status"]?.stringValue == "ok")
            #expect(try await client.get("/metrics", key: nil).status == 200)
        }
    }
}
