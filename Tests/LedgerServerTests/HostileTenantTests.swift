import Foundation
import LedgerServer
import Testing

/// App B holds an admin key on a server shared with app A and tries every attack the first audit found
/// (issue: "Tenant isolation and poison-proof ingestion"). After each one, everything app A can see — its
/// state, timeline, audit, lists and feed — must be byte for byte what it was, and the chain must verify.
@Suite("A hostile tenant changes and learns nothing of another app")
struct HostileTenantTests {
    static let a1 = #"{"id":"A-REQ","stream":"activity:LIVE-A1","type":"request","at":"2026-11-20T21:00:00Z","data":{"attributesType":"RideAttributes","attributes":{"ride":"A1"},"content":{"state":{"driver":"ALICE"}},"pushType":{"channel":"A-CHAN"},"installation":"I-A"}}"#
    static let a1Token = #"{"id":"A-TOK","stream":"activity:LIVE-A1","type":"token","at":"2026-11-20T21:00:01Z","data":{"token":"abcd0123"}}"#
    static let a1Update = #"{"id":"A-UPD","stream":"activity:LIVE-A1","type":"update","at":"2026-11-20T21:01:00Z","data":{"content":{"state":{"driver":"ALICE","eta":4}},"timestamp":1795208460}}"#
    static let at = "2026-11-20T21:30:00Z"

    /// Everything app A's read key sees of its ledger.
    static func snapshot(_ client: TestService.Client, key: String) async throws -> [String] {
        var seen: [String] = []
        for path in [
            "/v1/activities/LIVE-A1/state?at=\(at)", "/v1/activities/LIVE-A1/timeline", "/v1/activities/LIVE-A1/audit?at=\(at)",
            "/v1/updates/A-UPD/audit?at=\(at)", "/v1/activities?at=\(at)", "/v1/activities?channel=A-CHAN&at=\(at)",
            "/v1/activities?channel=B-CHAN&at=\(at)", "/v1/activities?token=abcd0123&at=\(at)",
            "/v1/activities?installation=I-A&at=\(at)", "/v1/feed?after=0",
        ] {
            let reply = try await client.get(path, key: key)
            // Positions are global (SPEC §6): the feed's `lastPosition` moves with every app's appends. The events
            // it lists, and everything else, must not.
            let text = reply.text.replacingOccurrences(of: #","lastPosition":\d+"#, with: "", options: .regularExpression)
            seen.append("\(path) \(reply.status) \(text)")
        }
        return seen
    }

    static func expectSame(_ after: [String], _ before: [String]) {
        for (now, then) in zip(after, before) { #expect(now == then) }
    }

    static func seed(_ client: TestService.Client, _ service: TestService) async throws {
        let batch = try await client.post(
            "/v1/batches", key: service.ingest, #"{"events":[\#(a1),\#(a1Token),\#(a1Update)]}"#)
        #expect(batch.status == 200, "\(batch.text)")
    }

    @Test("channels: B subscribes A's activity to its channel and ends the channel; A sees nothing of it", arguments: TestService.Mode.allCases)
    func channelHijack(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
            try await Self.seed(client, service)
            let before = try await Self.snapshot(client, key: service.read)
            let attack = #"""
                {"events":[
                 {"id":"B-SUB","stream":"channel:B-CHAN","type":"subscribe","at":"2026-11-20T21:02:00Z","data":{"activity":"LIVE-A1"}},
                 {"id":"B-SUB2","stream":"channel:A-CHAN","type":"subscribe","at":"2026-11-20T21:02:00Z","data":{"activity":"LIVE-A1"}},
                 {"id":"B-END","stream":"channel:B-CHAN","type":"end","at":"2026-11-20T21:03:00Z","data":{"content":{"state":{"driver":"MALLORY"}},"timestamp":1795208580,"dismissalPolicy":"immediate"}},
                 {"id":"B-END2","stream":"channel:A-CHAN","type":"end","at":"2026-11-20T21:03:00Z","data":{"content":{"state":{"driver":"MALLORY"}},"timestamp":1795208580,"dismissalPolicy":"immediate"}}]}
                """#
            let written = try await client.post("/v1/batches", key: service.otherAdmin, attack)
            #expect(written.status == 200, "\(written.text)")
            for update in ["B-END", "B-END2"] {
                let audit = try await client.get("/v1/updates/\(update)/audit?at=\(Self.at)", key: service.otherAdmin)
                #expect(!audit.text.contains("LIVE-A1"), "B learns of A's activity: \(audit.text)")
            }
            let bList = try await client.get("/v1/activities?channel=A-CHAN&at=\(Self.at)", key: service.otherAdmin)
            #expect(!bList.text.contains("LIVE-A1"), "\(bList.text)")
            Self.expectSame(try await Self.snapshot(client, key: service.read), before)
            #expect(try await client.get("/v1/verify", key: service.admin).json?["ok"] == .bool(true))
        }
    }

    @Test("names: B writes A's stream name, re-sends A's ids and squats a name A uses next; A is untouched and B is told nothing", arguments: TestService.Mode.allCases)
    func nameCollisions(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
            try await Self.seed(client, service)
            let before = try await Self.snapshot(client, key: service.read)
            // A's stream and id, other content: B's own, never a conflict that would reveal A's.
            let mallory = Self.a1Update.replacingOccurrences(of: "ALICE", with: "MALLORY")
            let resent = try await client.post("/v1/events", key: service.otherAdmin, mallory)
            #expect(resent.status == 200, "\(resent.text)")
            #expect(!resent.text.contains("position 3"), "\(resent.text)")
            // Refusals look the same whether the name exists in another app or nowhere.
            let probe = try await client.get("/v1/activities/LIVE-A1/state?at=\(Self.at)", key: service.otherAdmin)
            let nothing = try await client.get("/v1/activities/LIVE-ZZ/state?at=\(Self.at)", key: service.otherAdmin)
            #expect(probe.status == 404 && nothing.status == 404)
            #expect(probe.errorCode == nothing.errorCode)
            #expect(probe.text.replacingOccurrences(of: "LIVE-A1", with: "X") == nothing.text.replacingOccurrences(of: "LIVE-ZZ", with: "X"))
            let eventProbe = try await client.get("/v1/updates/A-REQ/audit", key: service.otherAdmin)
            let eventNothing = try await client.get("/v1/updates/NO-SUCH/audit", key: service.otherAdmin)
            #expect(eventProbe.status == 404)
            #expect(eventProbe.text.replacingOccurrences(of: "A-REQ", with: "X") == eventNothing.text.replacingOccurrences(of: "NO-SUCH", with: "X"))
            Self.expectSame(try await Self.snapshot(client, key: service.read), before)
            // Squatting: B takes a name first; A's request for it still succeeds, in A's namespace.
            _ = try await client.post("/v1/events", key: service.otherAdmin, Sample.request("RIDE-9", id: "SQ"))
            let mine = try await client.post("/v1/events", key: service.ingest, Sample.request("RIDE-9", id: "SQ"))
            #expect(mine.status == 200, "\(mine.text)")
            #expect(mine.json?["duplicate"] != .bool(true), "\(mine.text)")
            #expect(try await client.get("/v1/verify", key: service.admin).json?["ok"] == .bool(true))
        }
    }

    @Test("poison: an APNs exchange with an impossible status is refused with 4xx and writes nothing", arguments: TestService.Mode.allCases)
    func poisonedAPNsStatus(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
            try await Self.seed(client, service)
            let before = try await Self.snapshot(client, key: service.read)
            for status in ["99", "600", "0", "-1", "99999999999", "200.5", "\"200\""] {
                let body = #"""
                    {"activity":"LIVE-A1","at":"2026-11-20T21:04:00Z","request":{"token":"abcd0123","headers":{"apns-push-type":"liveactivity"},
                     "payload":{"aps":{"event":"update","timestamp":1795208640,"content-state":{"driver":"EVE"}}}},
                     "response":{"status":\#(status),"apnsId":"P-\#(status.count)"}}
                    """#
                for key in [service.ingest, service.otherAdmin] {
                    let reply = try await client.post("/v1/apns", key: key, body)
                    #expect((400..<500).contains(reply.status), "status \(status): \(reply.status) \(reply.text)")
                    if Int(status) != nil { #expect(reply.text.contains("response.status"), "\(reply.text)") }
                }
            }
            Self.expectSame(try await Self.snapshot(client, key: service.read), before)
            #expect(try service.storedIDs() == ["A-REQ", "A-TOK", "A-UPD"])
        }
    }

    @Test("a 410 timestamp the ledger cannot hold is refused naming it, and nothing is written")
    func apnsTimestamps() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            try await Self.seed(client, service)
            func exchange(_ timestamp: String, id: String) -> String {
                #"""
                {"activity":"LIVE-A1","at":"2026-11-20T21:04:00Z","request":{"token":"abcd0123","headers":{"apns-push-type":"liveactivity"},
                 "payload":{"aps":{"event":"update","timestamp":1795208640,"content-state":{"driver":"EVE"}}}},
                 "response":{"status":410,"reason":"Unregistered","timestamp":\#(timestamp),"apnsId":"\#(id)"}}
                """#
            }
            // Integers the schema takes but no time the ledger holds (it was dropped without a word).
            for bad in ["9223372036854775807", "-9223372036854775808", "253402300800000"] {
                let reply = try await client.post("/v1/apns", key: service.ingest, exchange(bad, id: "T-BAD"))
                #expect((400..<500).contains(reply.status), "\(bad): \(reply.status) \(reply.text)")
                #expect(reply.errorField == "response.timestamp", "\(bad): \(reply.text)")
            }
            for bad in ["1.5", #""yesterday""#, "true", "{}"] {
                let reply = try await client.post("/v1/apns", key: service.ingest, exchange(bad, id: "T-BAD"))
                #expect((400..<500).contains(reply.status), "\(bad): \(reply.status) \(reply.text)")
            }
            #expect(try service.storedIDs() == ["A-REQ", "A-TOK", "A-UPD"])
            let good = try await client.post(
                "/v1/apns", key: service.ingest, exchange("1795208580000", id: "30000000-0000-4000-8000-000000000001"))
            #expect(good.status == 200, "\(good.text)")
        }
    }

    @Test("fake tampering: NUL and control characters in ids and streams are refused, so verify stays clean", arguments: TestService.Mode.allCases)
    func controlCharacters(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
            try await Self.seed(client, service)
            for event in [
                #"{"id":"abc\u0000one","stream":"activity:LIVE-B","type":"dismiss","at":1,"data":{"by":"user"}}"#,
                #"{"id":"abc\u0000two","stream":"activity:LIVE-B","type":"dismiss","at":1,"data":{"by":"user"}}"#,
                #"{"stream":"activity:LIVE\u0000A1","type":"dismiss","at":1,"data":{"by":"user"}}"#,
                #"{"stream":"activity:LIVE\nA1","type":"dismiss","at":1,"data":{"by":"user"}}"#,
                #"{"stream":"channel:C\u001f","type":"subscribe","at":1,"data":{"activity":"LIVE-A1"}}"#,
            ] {
                let reply = try await client.post("/v1/events", key: service.otherAdmin, event)
                #expect((400..<500).contains(reply.status), "\(event): \(reply.status) \(reply.text)")
                #expect(reply.text.contains("control character"), "\(reply.text)")
            }
            #expect(try service.storedIDs() == ["A-REQ", "A-TOK", "A-UPD"])
            #expect(try await client.get("/v1/verify", key: service.admin).json?["ok"] == .bool(true))
        }
    }
}
