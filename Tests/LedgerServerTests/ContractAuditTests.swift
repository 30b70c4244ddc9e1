import Foundation
import LedgerServer
import Testing

/// Places where the HTTP service differed from the letter of SPEC §2/§7 or its OpenAPI document (the audit of
/// 2026-11-22); each test failed before its fix.
@Suite("HTTP contract audit")
struct ContractAuditTests {
    /// A request whose content-state is `bytes` long: under a 1 MiB body limit, over the 256 KiB event limit.
    static func oversized(_ activity: String, id: String, bytes: Int = 300_000) -> String {
        #"{"id":"\#(id)","stream":"activity:\#(activity)","type":"update","at":"2026-11-20T21:01:00Z","data":{"content":{"state":{"blob":""#
            + String(repeating: "x", count: bytes) + #""}},"timestamp":1795208460}}"#
    }

    @Test("an event over the ledger's per-event limit is refused over HTTP as on import, naming it; nothing is written")
    func oversizedEventRefused() async throws {
        let service = try TestService(maxBodyBytes: 1 << 20)
        try await service.test { client async throws in
            let single = try await client.post("/v1/events", key: service.ingest, Self.oversized("R1", id: "big-1"))
            #expect(single.status == 422, "\(single.text)")
            #expect(single.errorMessage.contains("over the limit"), "\(single.text)")
            let body = #"{"events":[\#(Sample.request("R1", id: "ok-1")),\#(Self.oversized("R1", id: "big-2"))]}"#
            let batch = try await client.post("/v1/batches", key: service.ingest, body)
            #expect(batch.status == 422, "\(batch.text)")
            #expect(batch.errorField == "events[1]", "\(batch.text)")
            let small = try await client.post(
                "/v1/events", key: service.ingest, Self.oversized("R1", id: "small-1", bytes: 10_000))
            #expect(small.status == 200, "\(small.text)")
        }
        #expect(try service.storedIDs() == ["small-1"])
        // The generated handler's path (raw appends off) refuses it the same way.
        var configured = try TestService(maxBodyBytes: 1 << 20)
        configured.configuration.rawAppends = false
        let generated = configured
        try await generated.test { client async throws in
            let single = try await client.post("/v1/events", key: generated.ingest, Self.oversized("R1", id: "big-3"))
            #expect(single.status == 422, "\(single.text)")
        }
        #expect(try generated.storedIDs() == [])
    }

    @Test("a query parameter of the wrong type or value is 400 invalidParameter naming it")
    func badQueryParameterNamed() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            let phase = try await client.get("/v1/activities?phase=asleep", key: service.read)
            #expect(phase.status == 400)
            #expect(phase.errorCode == "invalidParameter", "\(phase.text)")
            #expect(phase.errorField == "phase", "\(phase.text)")
            #expect(phase.errorMessage.contains("dismissed"), "\(phase.text)")
            let limit = try await client.get("/v1/activities?limit=abc", key: service.read)
            #expect(limit.status == 400)
            #expect(limit.errorField == "limit", "\(limit.text)")
            let after = try await client.get("/v1/feed?limit=5&after=abc", key: service.read)
            #expect(after.errorField == "after", "\(after.text)")
            let wait = try await client.get("/v1/feed?wait=soon", key: service.read)
            #expect(wait.errorField == "wait", "\(wait.text)")
            // `+` is a space in a query (the generated decoder reads `+3` as " 3"): named, not `field ''`.
            for (query, name) in [("/v1/feed?after=+3", "after"), ("/v1/feed?wait=+3", "wait"), ("/v1/activities?limit=+2", "limit")] {
                let plus = try await client.get(query, key: service.read)
                #expect(plus.status == 400, "\(query): \(plus.text)")
                #expect(plus.errorField == name, "\(query): \(plus.text)")
            }
            let run = try await client.post(
                "/v1/reconciliations", key: service.admin, "", contentType: "application/x-ndjson")
            #expect(run.status == 400)
            #expect(run.errorField == "run", "\(run.text)")
        }
    }

    @Test("activities can be filtered by channel over HTTP, as with the CLI's --channel")
    func channelFilter() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            _ = try await client.post("/v1/events", key: service.ingest, Sample.request("R1"))
            _ = try await client.post("/v1/events", key: service.ingest, Sample.request("R2"))
            let subscribe =
                #"{"stream":"channel:C1","type":"subscribe","at":"2026-11-20T21:00:01Z","data":{"activity":"R2"}}"#
            let subscribed = try await client.post("/v1/events", key: service.ingest, subscribe)
            #expect(subscribed.status == 200, "\(subscribed.text)")
            let page = try await client.get("/v1/activities?channel=C1", key: service.read)
            #expect(page.status == 200, "\(page.text)")
            let ids = (page.json?["activities"]?.arrayValue ?? []).compactMap { $0["activity"]?.stringValue }
            #expect(ids == ["R2"])
        }
    }

    @Test("an update's audit also has SPEC §7's flat deliveries and, for an activity's update, its activity")
    func updateAuditHasDeliveries() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            _ = try await client.post("/v1/events", key: service.ingest, Sample.request("R1"))
            _ = try await client.post("/v1/events", key: service.ingest, Sample.update("R1", id: "u-1"))
            let audit = try await client.get("/v1/updates/u-1/audit", key: service.read)
            #expect(audit.status == 200, "\(audit.text)")
            #expect(audit.json?["activity"]?.stringValue == "R1")
            let deliveries = audit.json?["deliveries"]?.arrayValue ?? []
            #expect(deliveries.count == 1)
            #expect(deliveries.first?["event"]?.stringValue == "u-1")
            #expect(deliveries.first?["verdict"] != nil)
            #expect((audit.json?["audits"]?.arrayValue ?? []).count == 1)
        }
    }

    @Test("verify takes a digest over HTTP as the CLI does: ok up to it, ok:false for another hash, 400 malformed")
    func verifyUpToDigest() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            _ = try await client.post("/v1/events", key: service.ingest, Sample.request("R1"))
            let digest = try await client.get("/v1/digest", key: service.admin)
            let taken = try #require(digest.json?["digest"]?.stringValue)
            _ = try await client.post("/v1/events", key: service.ingest, Sample.update("R1"))
            let good = try await client.get("/v1/verify?digest=\(taken)", key: service.admin)
            #expect(good.status == 200, "\(good.text)")
            #expect(good.json?["ok"] == .bool(true), "\(good.text)")
            let forged = "1:" + String(repeating: "0", count: 64)
            let bad = try await client.get("/v1/verify?digest=\(forged)", key: service.admin)
            #expect(bad.json?["ok"] == .bool(false), "\(bad.text)")
            #expect(bad.json?["firstBadPosition"] == .int(1), "\(bad.text)")
            #expect(bad.json?["reason"]?.stringValue != nil, "\(bad.text)")
            let malformed = try await client.get("/v1/verify?digest=junk", key: service.admin)
            #expect(malformed.status == 400, "\(malformed.text)")
            #expect(malformed.errorField == "digest", "\(malformed.text)")
            #expect(malformed.errorCode == "invalidParameter", "\(malformed.text)")
        }
    }

    @Test("an unknown type, source or phase in a body says what is allowed, naming the field")
    func unknownEnumSaysAllowed() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            let unknownType = #"{"stream":"activity:R1","type":"teleport","at":1,"data":{}}"#
            let reply = try await client.post("/v1/events", key: service.ingest, unknownType)
            #expect(reply.status == 400)
            #expect(reply.errorField == "type")
            #expect(reply.errorMessage.contains("expected one of request, token"), "\(reply.text)")
            #expect(reply.errorMessage.contains("teleport"), "\(reply.text)")
        }
    }

    @Test("audits take ?at= over HTTP as the CLI's audit --at does: the verdict as the evidence stood then")
    func auditAsOf() async throws {
        let service = try TestService()
        let update =
            #"{"id":"u-1","stream":"activity:R1","type":"update","at":"2026-11-20T21:01:00Z","data":{"content":{"state":{"eta":4}},"timestamp":1795208460}}"#
        let push =
            #"{"id":"p-1","stream":"activity:R1","type":"push","at":"2026-11-20T21:02:00Z","source":"apns","data":{"refersTo":"u-1","status":200}}"#
        try await service.test { client async throws in
            for event in [Sample.request("R1"), update, push] {
                let reply = try await client.post("/v1/events", key: service.ingest, event)
                #expect(reply.status == 200, "\(reply.text)")
            }
            let before = try await client.get("/v1/activities/R1/audit?at=2026-11-20T21:01:30Z", key: service.read)
            #expect(before.status == 200, "\(before.text)")
            #expect(before.json?["deliveries"]?.arrayValue?.first?["verdict"]?.stringValue == "pending", "\(before.text)")
            let now = try await client.get("/v1/activities/R1/audit", key: service.read)
            #expect(now.json?["deliveries"]?.arrayValue?.first?["verdict"]?.stringValue == "accepted", "\(now.text)")
            let update = try await client.get("/v1/updates/u-1/audit?at=2026-11-20T21:01:30Z", key: service.read)
            #expect(update.json?["deliveries"]?.arrayValue?.first?["verdict"]?.stringValue == "pending", "\(update.text)")
            let bad = try await client.get("/v1/activities/R1/audit?at=soon", key: service.read)
            #expect(bad.status == 400)
            #expect(bad.errorField == "at")
        }
    }

    @Test("an id repeated with other content in one batch is 409 naming the repeating event, and nothing is written")
    func batchRepeatNamesEvent() async throws {
        let service = try TestService()
        let user = #"{"id":"d-1","stream":"activity:R1","type":"dismiss","at":"2026-11-20T21:05:00Z","data":{"by":"user"}}"#
        let system = #"{"id":"d-1","stream":"activity:R1","type":"dismiss","at":"2026-11-20T21:05:00Z","data":{"by":"system"}}"#
        try await service.test { client async throws in
            let body = #"{"events":[\#(Sample.request("R1", id: "r-1")),\#(user),\#(system)]}"#
            let reply = try await client.post("/v1/batches", key: service.ingest, body)
            #expect(reply.status == 409, "\(reply.text)")
            #expect(reply.errorField == "events[2].id", "\(reply.text)")
            #expect(reply.errorMessage.contains("twice"), "\(reply.text)")
            // Stored before: the first occurrence is the refused one.
            _ = try await client.post("/v1/events", key: service.ingest, user)
            let again = #"{"events":[\#(Sample.request("R2", id: "r-2")),\#(system)]}"#
            let stored = try await client.post("/v1/batches", key: service.ingest, again)
            #expect(stored.status == 409, "\(stored.text)")
            #expect(stored.errorField == "events[1].id", "\(stored.text)")
            #expect(stored.errorMessage.contains("already stored"), "\(stored.text)")
        }
        #expect(try service.storedIDs() == ["d-1"])
    }
}
