import Foundation
import LedgerServer
import Testing

@Suite("Queries")
struct QueryTests {
    @Test("state passes the SPEC shape through, null members included")
    func state() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            _ = try await client.post("/v1/events", key: service.ingest, Sample.request("R1"))
            let reply = try await client.get("/v1/activities/R1/state?at=2026-11-20T21:14:03.250Z", key: service.read)
            #expect(reply.status == 200)
            #expect(reply.json?["activity"]?.stringValue == "R1")
            #expect(reply.json?["endedBy"] == .null)
            #expect(reply.json?["displayed"]?["timestamp"]?.intValue == 1_795_208_400)
            #expect(reply.text.contains(#""dismissedBy":null"#) || reply.text.contains(#""dismissedBy" : null"#))
            // Unix seconds work as well; before the request there is no such activity.
            #expect(try await client.get("/v1/activities/R1/state?at=1795209243", key: service.read).status == 200)
            #expect(try await client.get("/v1/activities/R1/state?at=1763672400", key: service.read).status == 404)
        }
    }

    @Test("timeline, activity audit and update audit answer in their shapes")
    func timelineAndAudits() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            _ = try await client.post("/v1/events", key: service.ingest, Sample.request("R1"))
            let update = #"{"id":"u-1","stream":"activity:R1","type":"update","at":"2026-11-20T21:05:00Z","data":{"content":{"state":{"eta":3}},"timestamp":1795208700}}"#
            _ = try await client.post("/v1/events", key: service.ingest, update)
            let timeline = try await client.get(
                "/v1/activities/R1/timeline?from=0&to=2026-12-01T00:00:00Z", key: service.read)
            #expect(timeline.status == 200)
            #expect(timeline.json?["entries"]?.arrayValue?.count == 2)
            let audit = try await client.get("/v1/activities/R1/audit", key: service.read)
            #expect(audit.json?["deliveries"]?.arrayValue?.first?["verdict"]?.stringValue == "pending")
            #expect(audit.json?["deliveries"]?.arrayValue?.first?["reason"] == .null)
            let updateAudit = try await client.get("/v1/updates/u-1/audit", key: service.read)
            #expect(updateAudit.status == 200)
            #expect(updateAudit.json?["audits"]?.arrayValue?.first?["activity"]?.stringValue == "R1")
        }
    }

    @Test("activity lists filter and page with the returned cursor")
    func activityPages() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            for name in ["A", "B", "C"] {
                _ = try await client.post("/v1/events", key: service.ingest, Sample.request(name))
            }
            _ = try await client.post("/v1/events", key: service.ingest, Sample.request("D", attributesType: "Other"))
            let first = try await client.get("/v1/activities?attributesType=RideAttributes&limit=2", key: service.read)
            #expect(first.json?["activities"]?.arrayValue?.map { $0["activity"]?.stringValue } == ["A", "B"])
            let cursor = try #require(first.json?["nextCursor"]?.stringValue)
            let second = try await client.get(
                "/v1/activities?attributesType=RideAttributes&limit=2&cursor=\(cursor)", key: service.read)
            #expect(second.json?["activities"]?.arrayValue?.map { $0["activity"]?.stringValue } == ["C"])
            #expect(second.json?["nextCursor"] == .null)
        }
    }

    @Test("the feed returns events after a position and continues from lastPosition")
    func feed() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            _ = try await client.post("/v1/events", key: service.ingest, Sample.request("R1"))
            _ = try await client.post("/v1/events", key: service.ingest, Sample.update("R1"))
            let all = try await client.get("/v1/feed?after=0", key: service.read)
            #expect(all.json?["events"]?.arrayValue?.map { $0["position"]?.intValue } == [1, 2])
            #expect(all.json?["lastPosition"]?.intValue == 2)
            let rest = try await client.get("/v1/feed?after=1&limit=10", key: service.read)
            #expect(rest.json?["events"]?.arrayValue?.count == 1)
            let none = try await client.get("/v1/feed?after=2", key: service.read)
            #expect(none.json?["events"]?.arrayValue?.isEmpty == true)
            #expect(none.json?["lastPosition"]?.intValue == 2)
        }
    }

    @Test("a long-poll returns as soon as an event is appended, before its wait is over")
    func longPoll() async throws {
        var service = try TestService()
        // A wait far beyond the bound: on a loaded 2-core machine a reply can be seconds late, but without the
        // early answer it would come only after the full minute.
        service.configuration.maxFeedWaitSeconds = 60
        let (read, ingest) = (service.read, service.ingest)
        try await service.test { client async throws in
            let start = ContinuousClock.now
            async let waiting = client.get("/v1/feed?after=0&wait=60", key: read)
            try await Task.sleep(for: .milliseconds(200))
            _ = try await client.post("/v1/events", key: ingest, Sample.request("R1"))
            let reply = try await waiting
            #expect(reply.json?["events"]?.arrayValue?.count == 1)
            #expect(ContinuousClock.now - start < .seconds(30))
        }
    }

    @Test("a long-poll with nothing new returns empty after its wait")
    func longPollTimesOut() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            let start = ContinuousClock.now
            let reply = try await client.get("/v1/feed?after=0&wait=0.3", key: service.read)
            #expect(reply.json?["events"]?.arrayValue?.isEmpty == true)
            #expect(ContinuousClock.now - start >= .milliseconds(300))
        }
    }
}
