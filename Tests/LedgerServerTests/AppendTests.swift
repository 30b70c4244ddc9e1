import Foundation
import LedgerServer
import Testing

@Suite("Appending events")
struct AppendTests {
    @Test("a single event is acknowledged with its position and stream version")
    func singleEvent() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            let reply = try await client.post("/v1/events", key: service.ingest, Sample.request("R1", id: "e-1"))
            #expect(reply.status == 200)
            #expect(reply.json?["id"]?.stringValue == "e-1")
            #expect(reply.json?["position"]?.intValue == 1)
            #expect(reply.json?["version"]?.intValue == 1)
            #expect(reply.json?["duplicate"] == .bool(false))
        }
        #expect(try service.storedIDs() == ["e-1"])
    }

    @Test("re-sending an id returns the original position and writes nothing")
    func idempotentSingle() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            _ = try await client.post("/v1/events", key: service.ingest, Sample.request("R1", id: "e-1"))
            _ = try await client.post("/v1/events", key: service.ingest, Sample.update("R1", id: "e-2"))
            let again = try await client.post("/v1/events", key: service.ingest, Sample.request("R1", id: "e-1"))
            #expect(again.status == 200)
            #expect(again.json?["position"]?.intValue == 1)
            #expect(again.json?["duplicate"] == .bool(true))
        }
        #expect(try service.storedIDs().count == 2)
    }

    @Test("a batch returns one result per event, originals for re-sent ids")
    func batch() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            _ = try await client.post("/v1/events", key: service.ingest, Sample.request("R1", id: "e-1"))
            let body =
                #"{"events":[\#(Sample.request("R1", id: "e-1")),\#(Sample.update("R1", id: "e-2")),\#(Sample.request("R2"))]}"#
            let reply = try await client.post("/v1/batches", key: service.ingest, body)
            #expect(reply.status == 200)
            let results = reply.json?["results"]?.arrayValue ?? []
            #expect(results.map { $0["position"]?.intValue } == [1, 2, 3])
            #expect(results.map { $0["duplicate"] } == [.bool(true), .bool(false), .bool(false)])
            #expect(reply.json?["lastPosition"]?.intValue == 3)
        }
    }

    @Test("an expected version that does not match is 409 naming the stream, and nothing is written")
    func versionConflict() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            _ = try await client.post("/v1/events", key: service.ingest, Sample.request("R1"))
            let body =
                #"{"events":[\#(Sample.update("R1")),\#(Sample.request("R2"))],"expectedVersions":{"activity:R1":0}}"#
            let reply = try await client.post("/v1/batches", key: service.ingest, body)
            #expect(reply.status == 409)
            #expect(reply.errorCode == "conflict")
            #expect(reply.json?["error"]?["stream"]?.stringValue == "activity:R1")
            #expect(reply.json?["error"]?["expectedVersion"]?.intValue == 0)
            #expect(reply.json?["error"]?["actualVersion"]?.intValue == 1)
            let single = try await client.post("/v1/events?expectedVersion=5", key: service.ingest, Sample.update("R1"))
            #expect(single.status == 409)
            let matching = try await client.post(
                "/v1/events?expectedVersion=1", key: service.ingest, Sample.update("R1"))
            #expect(matching.status == 200)
        }
        #expect(try service.storedIDs().count == 2)
    }

    @Test("an event the ledger refuses is 422 naming the field inside the batch, nothing written")
    func refusedEvent() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            let noTimestamp = #"{"stream":"activity:R1","type":"update","at":1763672400,"data":{"content":{"state":{}}}}"#
            let batch = try await client.post(
                "/v1/batches", key: service.ingest, #"{"events":[\#(Sample.request("R1")),\#(noTimestamp)]}"#)
            #expect(batch.status == 422)
            #expect(batch.errorField == "events[1].data.timestamp")
            let single = try await client.post("/v1/events", key: service.ingest, noTimestamp)
            #expect(single.status == 422)
            #expect(single.errorField == "data.timestamp")
        }
        #expect(try service.storedIDs().isEmpty)
    }

    @Test("a raw APNs exchange is recorded as events")
    func apnsExchange() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            let body = #"""
                {"activity":"R1","at":"2026-11-20T21:14:03.250Z",
                 "request":{"token":"abcd","headers":{"apns-push-type":"liveactivity","apns-priority":"10"},
                            "payload":{"aps":{"event":"update","timestamp":1763672400,"content-state":{"eta":3}}}},
                 "response":{"status":200,"apnsId":"A1"}}
                """#
            let reply = try await client.post("/v1/apns", key: service.ingest, body)
            #expect(reply.status == 200)
            // The update it carried and the push with APNs' answer.
            #expect(reply.json?["results"]?.arrayValue?.map { $0["stream"]?.stringValue } == ["activity:R1", "activity:R1"])
            let noEvent = try await client.post(
                "/v1/apns", key: service.ingest,
                #"{"request":{"headers":{},"payload":{"aps":{}}},"response":{"status":200}}"#)
            #expect(noEvent.status == 422, "\(noEvent.text)")
            #expect(noEvent.errorField?.contains("aps.event") == true, "\(noEvent.text)")
            let unknownToken = try await client.post(
                "/v1/apns", key: service.ingest,
                #"{"request":{"token":"ffff","headers":{},"payload":{"aps":{"event":"update","timestamp":1,"content-state":{}}}},"response":{"status":200}}"#)
            #expect(unknownToken.status == 404, "\(unknownToken.text)")
        }
    }
}
