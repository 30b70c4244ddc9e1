import ActivityModel
import Foundation
import HTTPTypes
import HummingbirdTesting
import Ledger
import LedgerServer
import Logging
import NIOCore
import Testing

/// The raw-body append route must answer exactly as the generated OpenAPI handler did: every request below is
/// sent to a server with the raw route and to one without, each over its own real ledger, and the replies
/// must be the same bytes.
@Suite("Raw-body appends answer like the generated handler")
struct RawAppendTests {
    /// One request: path (with query), body, optional content type and accept headers.
    struct Probe: Sendable, CustomStringConvertible {
        var path: String
        var body: String
        var contentType: String? = "application/json"
        var accept: String? = nil
        var description: String { "\(path) \(body.prefix(120))" }
    }

    static let update = #""type":"update","at":1763672400,"data":{"content":{"state":{"eta":3}},"timestamp":1763672400}"#

    /// Valid, refused by the schema, refused by the ledger, conflicting, and odd-but-valid requests, in order
    /// (later ones see the streams earlier ones wrote).
    static let probes: [Probe] = [
        Probe(path: "/v1/events", body: Sample.request("R1", id: "p-1")),
        Probe(path: "/v1/events", body: Sample.request("R1", id: "p-1")),
        Probe(path: "/v1/events", body: #"{"id":"p-2","stream":"activity:R1",\#(update)}"#),
        Probe(path: "/v1/events?expectedVersion=2", body: #"{"id":"p-3","stream":"activity:R1",\#(update)}"#),
        Probe(path: "/v1/events?expectedVersion=2", body: #"{"id":"p-4","stream":"activity:R1",\#(update)}"#),
        Probe(path: "/v1/events?expectedVersion=-1", body: #"{"id":"p-5","stream":"activity:R1",\#(update)}"#),
        Probe(path: "/v1/events?expectedVersion=x", body: #"{"id":"p-6","stream":"activity:R1",\#(update)}"#),
        Probe(path: "/v1/events?other=1", body: #"{"id":"p-7","stream":"activity:R1",\#(update)}"#),
        Probe(path: "/v1/events", body: #"{"id":"p-8","stream":"activity:R1","type":"update","at":"1763672400","data":{}}"#),
        Probe(path: "/v1/events", body: #"{"id":"p-9","stream":"activity:R1","type":"update","at":1763672400.5,"data":{"content":{"state":{}},"timestamp":1763672400}}"#),
        Probe(path: "/v1/events", body: #"{"id":"p-10","stream":"activity:R1","type":"update","at":1e9,"data":{"content":{"state":{}},"timestamp":1763672400}}"#),
        Probe(path: "/v1/events", body: #"{"id":"p-11","stream":"activity:R1","type":"update","at":"2026-11-20T21:00:00+01:00","source":null,"data":{"content":{"state":{"big":1.5e300}},"timestamp":1763672400},"extra":[1,{"x":null}]}"#),
        Probe(path: "/v1/events", body: #"{"id":null,"stream":"activity:R1","type":"dismiss","at":1e400,"data":{"by":"user"}}"#),
        Probe(path: "/v1/events", body: #"{"id":"p-12","stream":"activity:R1","type":"dismiss","at":99999999999,"data":{"by":"user"}}"#),
        Probe(path: "/v1/events", body: #"{"id":"p-13","stream":"activity:R1","type":"dismiss","at":1763672400,"data":{"by":"robot"}}"#),
        Probe(path: "/v1/events", body: #"{"id":"p-14","stream":"channel:C1","type":"token","at":1763672400,"data":{"token":"ab"}}"#),
        Probe(path: "/v1/events", body: #"{"id":"p-15","stream":"nowhere","type":"token","at":1763672400,"data":{"token":"ab"}}"#),
        Probe(path: "/v1/events", body: #"{"id":"","stream":"activity:R1","type":"dismiss","at":1763672400,"data":{"by":"user"}}"#),
        Probe(path: "/v1/events", body: #"{"id":"q\"uo/te\\ \u0001\n\t ünï 🚀","stream":"activity:R9","type":"request","at":1763672400,"data":{"attributesType":"A","attributes":{},"content":{"state":{}}}}"#),
        Probe(path: "/v1/events", body: #"{"id":"p-16","stream":"activity:R1","type":"dismiss","type":"end","at":1763672400,"data":{"by":"user"}}"#),
        Probe(path: "/v1/events", body: #"{"stream":null,"type":"request","at":1,"data":{}}"#),
        Probe(path: "/v1/events", body: #"{"stream":"activity:R1","type":"request","at":null,"data":{}}"#),
        Probe(path: "/v1/events", body: #"{"stream":"activity:R1","type":"request","at":1,"data":null}"#),
        Probe(path: "/v1/events", body: #"{"stream":7,"type":"request","at":1,"data":{}}"#),
        Probe(path: "/v1/events", body: #"{"stream":"activity:R1","type":"request","at":1,"source":"moon","data":{}}"#),
        Probe(path: "/v1/events", body: #"{"stream":"activity:R1","type":"request","at":1,"source":3,"data":{}}"#),
        Probe(path: "/v1/events", body: #"{"stream":"activity:R1","type":"request","at":1,"id":5,"data":{}}"#),
        Probe(path: "/v1/events", body: #"[{"stream":"activity:R1"}]"#),
        Probe(path: "/v1/events", body: #"{"stream":"#),
        Probe(path: "/v1/events", body: ""),
        Probe(path: "/v1/events", body: " \n" + Sample.request("R2", id: "p-17") + "\n "),
        Probe(path: "/v1/events", body: Sample.request("R3", id: "p-18"), contentType: nil),
        Probe(path: "/v1/events", body: Sample.request("R3", id: "p-19"), contentType: "text/plain"),
        Probe(path: "/v1/events", body: Sample.request("R3", id: "p-20"), accept: "text/plain"),
        Probe(path: "/v1/events", body: Sample.request("R3", id: "p-21"), accept: "application/json"),
        Probe(path: "/v1/batches", body: #"{"events":[\#(Sample.request("R4", id: "b-1")),{"id":"b-2","stream":"activity:R4",\#(update)}]}"#),
        Probe(path: "/v1/batches", body: #"{"events":[{"id":"b-3","stream":"activity:R4",\#(update)}],"expectedVersions":{"activity:R4":2}}"#),
        Probe(path: "/v1/batches", body: #"{"events":[{"id":"b-4","stream":"activity:R4",\#(update)}],"expectedVersions":{"activity:R4":2}}"#),
        Probe(path: "/v1/batches", body: #"{"events":[{"id":"b-5","stream":"activity:R4",\#(update)}],"expectedVersions":{"activity:R4":-1}}"#),
        Probe(path: "/v1/batches", body: #"{"events":[{"id":"b-6","stream":"activity:R4",\#(update)}],"expectedVersions":{"activity:R4":3.0}}"#),
        Probe(path: "/v1/batches", body: #"{"events":[{"id":"b-7","stream":"activity:R4",\#(update)}],"expectedVersions":null}"#),
        Probe(path: "/v1/batches", body: #"{"events":[{"id":"b-8","stream":"activity:R5",\#(update)}],"expectedVersions":{"activity:R5":0}}"#),
        Probe(path: "/v1/batches", body: #"{"events":[\#(Sample.request("R6", id: "b-9")),{"stream":"activity:R6","type":"update","at":1,"data":{"content":{}}}]}"#),
        Probe(path: "/v1/batches", body: #"{"events":[\#(Sample.request("R6", id: "b-10")),{"stream":"activity:R6","type":"teleport","at":1,"data":{}}]}"#),
        Probe(path: "/v1/batches", body: #"{"events":[\#(Sample.request("R6", id: "b-11")),{"stream":"activity:R6","type":"dismiss","at":"yesterday","data":{"by":"user"}}]}"#),
        Probe(path: "/v1/batches", body: #"{"events":[]}"#),
        Probe(path: "/v1/batches", body: #"{"events":null}"#),
        Probe(path: "/v1/batches", body: #"{"evens":[]}"#),
        Probe(path: "/v1/batches", body: #"{"events":[\#(Sample.request("R7", id: "b-12"))],"note":"ignored"}"#),
        Probe(path: "/v1/batches?x=1", body: #"{"events":[\#(Sample.request("R8", id: "b-13"))]}"#),
    ]

    @Test("every probe gets the same status, headers and bytes from the raw route as from the generated handler")
    func sameReplies() async throws {
        let raw = try TestService()
        var generated = try TestService()
        generated.configuration.rawAppends = false
        let rawReplies = try await Self.replies(raw)
        let generatedReplies = try await Self.replies(generated)
        for (probe, (fast, slow)) in zip(Self.probes, zip(rawReplies, generatedReplies)) {
            #expect(fast == slow, "\(probe)")
        }
        #expect(try raw.storedIDs() == generated.storedIDs())
    }

    @Test("an appended event keeps the members of its data in the order sent, as an import stores them")
    func keepsMemberOrder() async throws {
        let service = try TestService()
        let event =
            #"{"id":"o-1","stream":"activity:R1","type":"request","at":1763672400,"data":{"attributesType":"A","attributes":{"zeta":1,"alpha":2.50},"content":{"state":{"b":1,"a":2}}}}"#
        try await service.test { client async throws in
            let reply = try await client.post("/v1/events", key: service.ingest, event)
            #expect(reply.status == 200, "\(reply.text)")
        }
        let stored = try #require(try await service.ledger.feed(after: 0, limit: 10, app: TestService.app).events.first)
        let text = stored.json.compactString
        #expect(text.contains(#""attributes":{"zeta":1,"alpha":2.50}"#), "\(text)")
        #expect(text.contains(#""state":{"b":1,"a":2}"#), "\(text)")
    }

    /// Found: a body the raw route leaves to the generated handler (an exponent, deep nesting, a content type with parameters) was
    /// appended as `JSONEncoder` wrote the generated types back out, keys sorted and numbers re-formatted:
    /// `{"b":1.5e3,"a":2}` was stored as `{"a":2,"b":1500}` while `import` stores it as sent.
    @Test(
        "an event the generated handler serves is stored as sent, as the raw route and import store it",
        arguments: [true, false])
    func generatedKeepsTheBody(rawAppends: Bool) async throws {
        var service = try TestService()
        service.configuration.rawAppends = rawAppends
        let state = #"{"b":1.5e3,"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1E-2]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],"c":-0.0}"#
        let event: @Sendable (String) -> String = { id in
            #"{"id":"\#(id)","stream":"activity:\#(id)","type":"request","at":1.7636724E9,"data":{"attributesType":"A","attributes":{"z":1E0,"y":2},"content":{"state":\#(state)}}}"#
        }
        let ingest = service.ingest
        try await service.test { client async throws in
            for (path, body, type) in [
                ("/v1/events", event("g-1"), "application/json"),
                ("/v1/events", event("g-2"), "application/json; charset=UTF-8; x=1"),
                ("/v1/batches", #"{"events":[\#(event("g-3")),\#(event("g-4"))]}"#, "application/json"),
            ] {
                let reply = try await client.post(path, key: ingest, body, contentType: type)
                #expect(reply.status == 200, "\(path) \(type): \(reply.text)")
            }
        }
        let stored = try await service.ledger.feed(after: 0, limit: 10, app: TestService.app).events
        #expect(stored.count == 4)
        for event in stored {
            let text = event.json.compactString
            #expect(text.contains(#""attributes":{"z":1E0,"y":2}"#), "\(text)")
            #expect(text.contains(#""state":\#(state)"#), "\(text)")
        }
    }

    /// Found by a probe: an event nested 500 deep (or a batch of 60 events 66 deep, 18 KB) went to the generated
    /// decoder, whose bound on work refused it as `tooComplex`, while `import` stored it.
    @Test("small events nested deep are appended, alone and in a batch, as import takes them")
    func deepButSmall() async throws {
        let service = try TestService()
        func event(_ id: String, depth: Int) -> String {
            let state = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            return #"{"id":"\#(id)","stream":"activity:\#(id)","type":"request","at":1763672400,"data":{"attributesType":"T","attributes":{},"content":{"state":{"x":\#(state)}}}}"#
        }
        let single = event("deep-1", depth: 500)
        let batch = #"{"events":["# + (0..<60).map { event("deep-b\($0)", depth: 66) }.joined(separator: ",") + "]}"
        let ingest = service.ingest
        try await service.test { client async throws in
            let one = try await client.post("/v1/events", key: ingest, single)
            #expect(one.status == 200, "\(one.text.prefix(300))")
            let many = try await client.post("/v1/batches", key: ingest, batch)
            #expect(many.status == 200, "\(many.text.prefix(300))")
        }
        #expect(try service.storedIDs().count == 61)
    }

    /// What a client sees of a reply: status, content type, length and body bytes.
    struct Seen: Equatable, CustomStringConvertible {
        var status: Int
        var contentType: String?
        var contentLength: String?
        var body: String
        var description: String { "\(status) \(contentType ?? "-") \(contentLength ?? "-") \(body)" }
    }

    static func replies(_ service: TestService) async throws -> [Seen] {
        let app = try LedgerServerApp.build(
            configuration: service.configuration, ledger: service.ledger, keys: service.keys,
            metrics: ServerMetrics(), logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        return try await app.test(.router) { client in
            var seen: [Seen] = []
            for probe in probes {
                var headers: HTTPFields = [.authorization: "Bearer \(service.ingest)"]
                if let contentType = probe.contentType { headers[.contentType] = contentType }
                if let accept = probe.accept { headers[.accept] = accept }
                let reply = try await client.execute(
                    uri: probe.path, method: .post, headers: headers, body: ByteBuffer(string: probe.body)
                ) { response in
                    Seen(
                        status: response.status.code, contentType: response.headers[.contentType],
                        contentLength: response.headers[.contentLength], body: String(buffer: response.body))
                }
                seen.append(reply)
            }
            return seen
        }
    }
}
