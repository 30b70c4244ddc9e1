import Foundation
import HTTPTypes
import HummingbirdTesting
import Ledger
import LedgerServer
import LedgerWeb
import Testing

/// The incident view's server side: the page and its assets, the incident answer, the paged update audit and
/// token-prefix search, over the in-process router and a live server. The page itself runs in Chromium in
/// Tools/web-test.py (`make web-tests`).
@Suite("Incident view over HTTP")
struct WebViewTests {
    /// R1 with a token and two updates; channel C with three subscribers and one update.
    static let events = #"""
        {"events":[
        {"id":"r1","stream":"activity:R1","type":"request","at":"2026-11-20T21:00:00Z","data":{"attributesType":"RideAttributes","attributes":{"ride":"R1"},"content":{"state":{"eta":5},"staleDate":"2026-11-20T21:30:00Z"},"pushType":"token"}},
        {"id":"k1","stream":"activity:R1","type":"token","at":"2026-11-20T21:00:01Z","data":{"token":"abcdef0123"}},
        {"id":"u1","stream":"activity:R1","type":"update","at":"2026-11-20T21:10:00Z","data":{"content":{"state":{"eta":3}},"timestamp":1795208800}},
        {"id":"e1","stream":"activity:R1","type":"end","at":"2026-11-20T21:20:00Z","data":{"timestamp":1795209600,"dismissalPolicy":"immediate"}},
        {"id":"ra","stream":"activity:A","type":"request","at":"2026-11-20T20:00:00Z","data":{"attributesType":"S","attributes":{},"content":{"state":{"h":0}},"pushType":{"channel":"C"}}},
        {"id":"rb","stream":"activity:B","type":"request","at":"2026-11-20T20:00:00Z","data":{"attributesType":"S","attributes":{},"content":{"state":{"h":0}},"pushType":{"channel":"C"}}},
        {"id":"rc","stream":"activity:Cc","type":"request","at":"2026-11-20T20:00:00Z","data":{"attributesType":"S","attributes":{},"content":{"state":{"h":0}},"pushType":{"channel":"C"}}},
        {"id":"cu","stream":"channel:C","type":"update","at":"2026-11-20T20:30:00Z","data":{"content":{"state":{"h":1}},"timestamp":1795206600}}
        ]}
        """#

    @Test("the page, its deep links and assets need no key and carry a strict Content-Security-Policy", arguments: TestService.Mode.allCases)
    func page(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
            for path in ["/", "/activities/RIDE-8812?at=2026-11-20T21:14:00Z", "/updates/u1"] {
                let reply = try await client.get(path, key: nil)
                #expect(reply.status == 200, "\(path)")
                #expect(reply.text == IncidentPage.shell)
                #expect(reply.headers[.contentType] == "text/html; charset=utf-8")
                #expect(reply.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)
                #expect(reply.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
            }
            let script = try await client.get("/assets/incident.js", key: nil)
            #expect(script.text == IncidentPage.script)
            #expect(script.headers[.contentType] == "text/javascript; charset=utf-8")
            #expect(try await client.get("/assets/incident.css", key: nil).text == IncidentPage.stylesheet)
            // Declared paths answer other methods with 405, like the API's; unknown paths stay 404.
            #expect(try await client.post("/", key: nil, "{}").status == 405)
            #expect(try await client.get("/assets/other.js", key: nil).status == 404)
            #expect(try await client.get("/activities/", key: nil).status == 404)
        }
    }

    @Test("the incident answer: state at the window's end, the window's events and verdicts, a card per change", arguments: TestService.Mode.allCases)
    func incident(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
            #expect(try await client.post("/v1/batches", key: service.ingest, Self.events).status == 200)
            let reply = try await client.get("/v1/activities/R1/incident", key: service.read)
            #expect(reply.status == 200, "\(reply.text)")
            let json = try #require(reply.json)
            #expect(json["from"]?.stringValue == "2026-11-20T21:00:00.000Z")
            // An immediate end removes it at the end: the window closes a minute after (a twentieth of 20 min is less).
            #expect(json["to"]?.stringValue == "2026-11-20T21:21:00.000Z")
            #expect(json["state"]?["phase"]?.stringValue == "dismissed")
            #expect(json["timeline"]?["entries"]?.arrayValue?.map { $0["event"]?["id"]?.stringValue } == ["r1", "k1", "u1", "e1"])
            #expect(json["audit"]?["deliveries"]?.arrayValue?.map { $0["event"]?.stringValue } == ["u1", "e1"])
            let cards = json["cards"]?.arrayValue ?? []
            #expect(cards.map { $0["at"]?.stringValue } == [
                "2026-11-20T21:00:00.000Z", "2026-11-20T21:00:01.000Z", "2026-11-20T21:10:00.000Z",
                "2026-11-20T21:20:00.000Z", "2026-11-20T21:21:00.000Z",
            ])
            #expect(cards.map { $0["phase"]?.stringValue } == ["active", "active", "active", "dismissed", "dismissed"])
            #expect(cards.last?["token"]?.stringValue == "abcdef0123")
            // Every card equals the state at its moment.
            for card in cards {
                let at = try #require(card["at"]?.stringValue)
                let state = try await client.get("/v1/activities/R1/state?at=\(at)", key: service.read).json
                #expect(card["phase"] == state?["phase"] && card["displayed"] == state?["displayed"], "\(at)")
            }
            let window = try await client.get(
                "/v1/activities/R1/incident?from=2026-11-20T21:05:00Z&to=2026-11-20T21:15:00Z", key: service.read)
            #expect(window.json?["timeline"]?["entries"]?.arrayValue?.map { $0["event"]?["id"]?.stringValue } == ["u1"])
            #expect(window.json?["cards"]?.arrayValue?.first?["at"]?.stringValue == "2026-11-20T21:05:00.000Z")
            let backwards = try await client.get(
                "/v1/activities/R1/incident?from=2026-11-20T21:15:00Z&to=2026-11-20T21:05:00Z", key: service.read)
            // As for the timeline: an empty window (the CLI's report refuses it as a mistake in its options).
            #expect(backwards.status == 200, "\(backwards.text)")
            #expect(backwards.json?["cards"]?.arrayValue?.isEmpty == true)
            #expect(backwards.json?["timeline"]?["entries"]?.arrayValue?.isEmpty == true)
            let early = try await client.get("/v1/activities/R1/incident?to=2026-11-20T20:00:00Z", key: service.read)
            #expect(early.status == 404, "\(early.text)")
            #expect(try await client.get("/v1/activities/R1/incident?to=1e300", key: service.read).status == 400)
            #expect(try await client.get("/v1/activities/R1/incident", key: nil).status == 401)
            // Another app's key learns nothing, as for every query.
            let other = try await client.get("/v1/activities/R1/incident", key: service.otherAdmin)
            #expect(other.status == 404)
            let missing = try await client.get("/v1/activities/NOPE/incident", key: service.read)
            #expect(other.status == missing.status && other.errorCode == missing.errorCode)
        }
    }

    @Test("a channel update's audit pages its subscribers with limit and cursor", arguments: TestService.Mode.allCases)
    func updateAuditPages(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
            #expect(try await client.post("/v1/batches", key: service.ingest, Self.events).status == 200)
            let whole = try await client.get("/v1/updates/cu/audit", key: service.read)
            #expect(whole.json?["deliveries"]?.arrayValue?.map { $0["activity"]?.stringValue } == ["A", "B", "Cc"])
            #expect(whole.json?["subscribers"] == nil)
            let first = try await client.get("/v1/updates/cu/audit?limit=2", key: service.read)
            #expect(first.json?["deliveries"]?.arrayValue?.map { $0["activity"]?.stringValue } == ["A", "B"])
            #expect(first.json?["subscribers"]?.intValue == 3)
            let cursor = try #require(first.json?["nextCursor"]?.stringValue)
            let second = try await client.get("/v1/updates/cu/audit?limit=2&cursor=\(cursor)", key: service.read)
            #expect(second.json?["deliveries"]?.arrayValue?.map { $0["activity"]?.stringValue } == ["Cc"])
            #expect(second.json?["nextCursor"] == .null)
            // The pages together are the whole answer.
            #expect(
                (first.json?["deliveries"]?.arrayValue ?? []) + (second.json?["deliveries"]?.arrayValue ?? [])
                    == whole.json?["deliveries"]?.arrayValue)
            let single = try await client.get("/v1/updates/u1/audit?limit=5", key: service.read)
            #expect(single.json?["subscribers"]?.intValue == 1)
            #expect(single.json?["deliveries"]?.arrayValue?.count == 1)
            for bad in ["limit=0", "limit=1001", "cursor=\(cursor)", "limit=2&cursor=forged"] {
                let reply = try await client.get("/v1/updates/cu/audit?\(bad)", key: service.read)
                #expect(reply.status == 400, "\(bad): \(reply.text)")
                #expect(reply.errorField == (bad.hasPrefix("limit=0") || bad.hasPrefix("limit=1001") ? "limit" : "cursor"), "\(bad)")
            }
        }
    }

    @Test("activities are found by the start of a token they ever had, in the caller's app only", arguments: TestService.Mode.allCases)
    func tokenPrefix(mode: TestService.Mode) async throws {
        let service = try TestService()
        try await service.test(mode.setup) { client async throws in
            #expect(try await client.post("/v1/batches", key: service.ingest, Self.events).status == 200)
            for prefix in ["a", "abcdef", "abcdef0123"] {
                let reply = try await client.get("/v1/activities?tokenPrefix=\(prefix)", key: service.read)
                #expect(reply.json?["activities"]?.arrayValue?.map { $0["activity"]?.stringValue } == ["R1"], "\(prefix)")
            }
            for prefix in ["abcdef01234", "b", "0"] {
                let reply = try await client.get("/v1/activities?tokenPrefix=\(prefix)", key: service.read)
                #expect(reply.json?["activities"]?.arrayValue?.isEmpty == true, "\(prefix): \(reply.text)")
            }
            let other = try await client.get("/v1/activities?tokenPrefix=ab", key: service.otherAdmin)
            #expect(other.json?["activities"]?.arrayValue?.isEmpty == true)
            for bad in ["xyz", "ab%20", "\(String(repeating: "a", count: 201))"] {
                let reply = try await client.get("/v1/activities?tokenPrefix=\(bad)", key: service.read)
                #expect(reply.status == 400 && reply.errorField == "tokenPrefix", "\(bad): \(reply.text)")
            }
            // A whole token is hex digits too: "zz" listed nothing with a 200, as if it were a token nobody had.
            let whole = try await client.get("/v1/activities?token=abcdef0123", key: service.read)
            #expect(whole.json?["activities"]?.arrayValue?.map { $0["activity"]?.stringValue } == ["R1"], "\(whole.text)")
            for bad in ["zz", "", "ab%20"] {
                let reply = try await client.get("/v1/activities?token=\(bad)", key: service.read)
                #expect(reply.status == 400 && reply.errorField == "token", "\(bad): \(reply.text)")
            }
        }
    }
}
