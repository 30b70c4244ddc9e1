import ActivityModel
import Ledger
import Foundation
import LedgerServer
import Testing

/// Every append behaviour, checked through the in-process router and through a live server on a loopback port,
/// and then in the ledger file itself.
@Suite("Appending over HTTP to the real ledger")
struct AppendTests {
    @Test("single events get gapless positions and stream versions, and are in the file", arguments: TestService.Mode.allCases)
    func singleEvents(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
            let first = try await client.post("/v1/events", key: service.ingest, Sample.request("R1", id: "e-1"))
            #expect(first.status == 200, "\(first.text)")
            #expect(first.json?["id"]?.stringValue == "e-1")
            #expect(first.json?["position"]?.intValue == 1)
            #expect(first.json?["version"]?.intValue == 1)
            #expect(first.json?["stream"]?.stringValue == "activity:R1")
            #expect(first.json?["duplicate"] == .bool(false))
            let second = try await client.post("/v1/events", key: service.ingest, Sample.update("R1", id: "e-2"))
            #expect(second.json?["position"]?.intValue == 2)
            #expect(second.json?["version"]?.intValue == 2)
        }
        // Bare ids: stored in the key's app.
        #expect(try service.storedIDs() == ["e-1", "e-2"])
    }

    @Test("re-sending an id returns the original position, single or in a batch, and writes nothing", arguments: TestService.Mode.allCases)
    func idempotent(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
            _ = try await client.post("/v1/events", key: service.ingest, Sample.request("R1", id: "e-1"))
            _ = try await client.post("/v1/events", key: service.ingest, Sample.update("R1", id: "e-2"))
            let again = try await client.post("/v1/events", key: service.ingest, Sample.request("R1", id: "e-1"))
            #expect(again.status == 200)
            #expect(again.json?["position"]?.intValue == 1)
            #expect(again.json?["duplicate"] == .bool(true))
            let body =
                #"{"events":[\#(Sample.update("R1", id: "e-2")),\#(Sample.request("R2", id: "e-3"))]}"#
            let batch = try await client.post("/v1/batches", key: service.ingest, body)
            #expect(batch.status == 200, "\(batch.text)")
            let results = batch.json?["results"]?.arrayValue ?? []
            #expect(results.map { $0["position"]?.intValue } == [2, 3])
            #expect(results.map { $0["duplicate"] } == [.bool(true), .bool(false)])
            #expect(batch.json?["lastPosition"]?.intValue == 3)
        }
        #expect(try service.storedIDs() == ["e-1", "e-2", "e-3"])
    }

    @Test("a batch is appended in order with one result per event, an id made for an event sent without one", arguments: TestService.Mode.allCases)
    func batch(mode: TestService.Mode) async throws {
        let service = try TestService()
        let made = try await service.test(mode.setup) { client async throws -> String? in
            let body =
                #"{"events":[\#(Sample.request("R1", id: "b-1")),\#(Sample.update("R1", id: "b-2")),\#(Sample.request("R2", id: "b-3")),\#(Sample.request("R3"))]}"#
            let reply = try await client.post("/v1/batches", key: service.ingest, body)
            #expect(reply.status == 200, "\(reply.text)")
            let results = reply.json?["results"]?.arrayValue ?? []
            #expect(results.map { $0["position"]?.intValue } == [1, 2, 3, 4])
            #expect(results.map { $0["version"]?.intValue } == [1, 2, 1, 1])
            #expect(results.prefix(3).map { $0["id"]?.stringValue } == ["b-1", "b-2", "b-3"])
            #expect(results.map { $0["duplicate"] } == Array(repeating: .bool(false), count: 4))
            #expect(reply.json?["lastPosition"]?.intValue == 4)
            return results.last?["id"]?.stringValue
        }
        let madeID = try #require(made)
        #expect(!madeID.isEmpty)
        #expect(try service.storedIDs() == ["b-1", "b-2", "b-3", madeID])
    }

    @Test("an expected version that does not match is 409 naming the stream, and nothing of the batch is written", arguments: TestService.Mode.allCases)
    func versionConflict(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
            _ = try await client.post("/v1/events", key: service.ingest, Sample.request("R1", id: "c-1"))
            let body =
                #"{"events":[\#(Sample.request("R2", id: "c-2")),\#(Sample.update("R1", id: "c-3"))],"expectedVersions":{"activity:R1":0}}"#
            let reply = try await client.post("/v1/batches", key: service.ingest, body)
            #expect(reply.status == 409, "\(reply.text)")
            #expect(reply.errorCode == "conflict")
            #expect(reply.json?["error"]?["stream"]?.stringValue == "activity:R1")
            #expect(reply.json?["error"]?["expectedVersion"]?.intValue == 0)
            #expect(reply.json?["error"]?["actualVersion"]?.intValue == 1)
            // Named as the batch names it (it named the single route's query parameter).
            #expect(reply.errorField == "expectedVersions['activity:R1']", "\(reply.text)")
            let single = try await client.post(
                "/v1/events?expectedVersion=5", key: service.ingest, Sample.update("R1", id: "c-4"))
            #expect(single.status == 409)
            #expect(single.errorField == "expectedVersion", "\(single.text)")
            // A key no stream can have (over 1024 bytes) is refused, as such a stream name is.
            let long = "activity:" + String(repeating: "k", count: 2000)
            let refused = try await client.post(
                "/v1/batches", key: service.ingest,
                #"{"events":[\#(Sample.request("R3", id: "c-6"))],"expectedVersions":{"\#(long)":0}}"#)
            #expect(refused.status == 400 || refused.status == 422, "\(refused.text.prefix(300))")
            #expect(refused.errorField == "expectedVersions", "\(refused.text.prefix(300))")
            let matching = try await client.post(
                "/v1/events?expectedVersion=1", key: service.ingest, Sample.update("R1", id: "c-5"))
            #expect(matching.status == 200, "\(matching.text)")
            #expect(matching.json?["version"]?.intValue == 2)
        }
        #expect(try service.storedIDs() == ["c-1", "c-5"])
    }

    @Test("a refused event in a batch is 422 naming events[i].field, and nothing of the batch is written", arguments: TestService.Mode.allCases)
    func refusedEvent(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
            let noTimestamp = #"{"stream":"activity:R1","type":"update","at":1763672400,"data":{"content":{"state":{}}}}"#
            let batch = try await client.post(
                "/v1/batches", key: service.ingest,
                #"{"events":[\#(Sample.request("R1", id: "r-1")),\#(noTimestamp)]}"#)
            #expect(batch.status == 422, "\(batch.text)")
            #expect(batch.errorField == "events[1].data.timestamp")
            let single = try await client.post("/v1/events", key: service.ingest, noTimestamp)
            #expect(single.status == 422)
            #expect(single.errorField == "data.timestamp")
            let wrongStream = #"{"stream":"channel:C1","type":"token","at":1763672400,"data":{"token":"ab"}}"#
            let mismatch = try await client.post(
                "/v1/batches", key: service.ingest, #"{"events":[\#(Sample.request("R2")),\#(wrongStream)]}"#)
            #expect(mismatch.status == 422, "\(mismatch.text)")
            #expect(mismatch.errorField?.hasPrefix("events[1]") == true, "\(mismatch.text)")
        }
        #expect(try service.storedIDs().isEmpty)
    }

    @Test("a raw APNs exchange naming its activity is recorded as the update it carried and the push, 422 without aps.event", arguments: TestService.Mode.allCases)
    func apnsByActivity(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
            let body = #"""
                {"activity":"R1","at":"2026-11-20T21:14:03.250Z",
                 "request":{"token":"abcd","headers":{"apns-push-type":"liveactivity","apns-priority":"10"},
                            "payload":{"aps":{"event":"update","timestamp":1763672400,"content-state":{"eta":3}}}},
                 "response":{"status":200,"apnsId":"A1"}}
                """#
            let reply = try await client.post("/v1/apns", key: service.ingest, body)
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.json?["results"]?.arrayValue?.map { $0["stream"]?.stringValue } == ["activity:R1", "activity:R1"])
            let noEvent = try await client.post(
                "/v1/apns", key: service.ingest,
                #"{"request":{"headers":{},"payload":{"aps":{}}},"response":{"status":200}}"#)
            #expect(noEvent.status == 422, "\(noEvent.text)")
            #expect(noEvent.errorField?.contains("aps.event") == true, "\(noEvent.text)")
        }
        #expect(try service.storedIDs().count == 2)
    }

    /// Found by a probe: the generated layer refuses an `Accept` without JSON only after the handler ran, so a 406
    /// had appended its events (and a client retrying it wrote an APNs exchange twice).
    @Test("a write whose Accept takes no JSON is 406 and writes nothing; one that takes JSON among others is served")
    func notAcceptableWritesNothing() async throws {
        let service = try TestService()
        let apns = #"{"activity":"R1","request":{"token":"abcd","headers":{},"payload":{"aps":{"event":"update","timestamp":1763672400,"content-state":{}}}},"response":{"status":200}}"#
        try await service.test { client async throws in
            for accept in ["text/plain", "application/xml", "text/*", "application/problem+json", "application/json;q=0"] {
                for (path, body) in [
                    ("/v1/events", Sample.request("R1")), ("/v1/batches", #"{"events":[\#(Sample.request("R2"))]}"#),
                    ("/v1/apns", apns),
                ] {
                    let reply = try await client.post(path, key: service.ingest, body, accept: accept)
                    #expect(reply.status == 406, "\(path) \(accept): \(reply.text)")
                }
            }
            let served = try await client.post(
                "/v1/events", key: service.ingest, Sample.request("R1"), accept: "text/html, application/json;q=0.5")
            #expect(served.status == 200, "\(served.text)")
        }
        #expect(try service.storedIDs().count == 1)
    }

    /// Found: the exchange was read back out of the generated types with `JSONEncoder`, so the update it recorded
    /// held `{"a":-0.0,"b":1500}` for a push that carried `{"b":1.5e3,"a":-0.0}` — another `contentHash`.
    @Test("the update an APNs exchange records holds its content-state as the push carried it")
    func apnsContentAsSent() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            let body = #"""
                {"activity":"R1","at":"2026-11-20T21:14:03.250Z",
                 "request":{"token":"abcd","headers":{"apns-push-type":"liveactivity"},
                            "payload":{"aps":{"event":"update","timestamp":1763672400,"content-state":{"b":1.5e3,"a":-0.0}}}},
                 "response":{"status":200,"apnsId":"A1"}}
                """#
            let reply = try await client.post("/v1/apns", key: service.ingest, body)
            #expect(reply.status == 200, "\(reply.text)")
            // Null is "not given" for an optional member, as the generated decoder reads it (a probe found `"at":
            // null` refused once the exchange was read as sent).
            let nulls = #"""
                {"activity":"R1","at":null,
                 "request":{"token":"abcd","channel":null,"headers":{"apns-push-type":"liveactivity"},
                            "payload":{"aps":{"event":"update","timestamp":1763672401,"content-state":{"b":null}}}},
                 "response":{"status":200,"apnsId":null,"reason":null,"timestamp":null}}
                """#
            let withNulls = try await client.post("/v1/apns", key: service.ingest, nulls)
            #expect(withNulls.status == 200, "\(withNulls.text)")
        }
        let stored = try await service.ledger.feed(after: 0, limit: 10, app: TestService.app).events
        let update = try #require(stored.first { $0.json.compactString.contains(#""type":"update""#) })
        #expect(update.json.compactString.contains(#""state":{"b":1.5e3,"a":-0.0}"#), "\(update.json.compactString)")
    }

    @Test("a raw APNs exchange without an activity is resolved through an earlier token event, 404 for an unknown token", arguments: TestService.Mode.allCases)
    func apnsByToken(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
            let token = #"{"stream":"activity:R1","type":"token","at":"2026-11-20T21:00:01Z","data":{"token":"abcd0123"}}"#
            let setup = try await client.post(
                "/v1/batches", key: service.ingest, #"{"events":[\#(Sample.request("R1")),\#(token)]}"#)
            #expect(setup.status == 200, "\(setup.text)")
            let body = #"""
                {"at":"2026-11-20T21:14:03.250Z",
                 "request":{"token":"abcd0123","headers":{"apns-push-type":"liveactivity","apns-priority":"10"},
                            "payload":{"aps":{"event":"update","timestamp":1795209243,"content-state":{"eta":3}}}},
                 "response":{"status":200,"apnsId":"A1"}}
                """#
            let reply = try await client.post("/v1/apns", key: service.ingest, body)
            #expect(reply.status == 200, "\(reply.text)")
            let results = reply.json?["results"]?.arrayValue ?? []
            #expect(results.count == 2)
            #expect(results.allSatisfy { $0["stream"]?.stringValue == "activity:R1" })
            let again = try await client.post("/v1/apns", key: service.ingest, body)
            #expect(again.json?["results"]?.arrayValue?.allSatisfy { $0["duplicate"] == .bool(true) } == true)
            let audit = try await client.get("/v1/activities/R1/audit", key: service.read)
            #expect(audit.json?["deliveries"]?.arrayValue?.first?["verdict"]?.stringValue == "accepted", "\(audit.text)")
            // The token in another hex case is the same device token (the proxy's rule, found missing here): found,
            // and recorded as the ledger holds it.
            let upper = body.replacingOccurrences(of: "abcd0123", with: "ABCD0123").replacingOccurrences(of: "A1", with: "A2")
            let cased = try await client.post("/v1/apns", key: service.ingest, upper)
            #expect(cased.status == 200, "\(cased.text)")
            let timeline = try await client.get("/v1/activities/R1/timeline", key: service.read)
            let pushTokens = timeline.json?["entries"]?.arrayValue?.compactMap {
                $0["event"]?["type"]?.stringValue == "push" ? $0["event"]?["data"]?["token"]?.stringValue : nil
            }
            #expect(pushTokens == ["abcd0123", "abcd0123"], "\(timeline.text)")
            for aps in [#"{}"#, #"{"event":"update","timestamp":1,"content-state":{}}"#] {
                let unknown = try await client.post(
                    "/v1/apns", key: service.ingest,
                    #"{"request":{"token":"ffff","headers":{},"payload":{"aps":\#(aps)}},"response":{"status":200}}"#)
                #expect(unknown.status == 404, "\(aps): \(unknown.text)")
            }
        }
        #expect(try service.storedIDs().count == 6)
    }
}
