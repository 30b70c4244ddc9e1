import Foundation
import HTTPTypes
import LedgerServer
import LedgerTesting
import Testing

/// The server enforces the limits Schemas/openapi.yaml publishes, and names the field in the client's terms.
@Suite("The limits of the published schema")
struct SchemaLimitTests {
    static func event(_ index: Int, id: String? = nil) -> String {
        let idMember = id.map { #""id":"\#($0)","# } ?? ""
        return #"{\#(idMember)"stream":"activity:R\#(index)","type":"dismiss","at":1763672400,"data":{"by":"user"}}"#
    }

    @Test("a batch of 10,001 events is 400 naming events; 10,000 are not refused for their number")
    func batchSize() async throws {
        let service = try TestService(maxBodyBytes: 4 << 20)
        try await service.test { client async throws in
            let tooMany = (0..<10_001).map { Self.event($0) }.joined(separator: ",")
            let reply = try await client.post("/v1/batches", key: service.ingest, #"{"events":[\#(tooMany)]}"#)
            #expect(reply.status == 400)
            #expect(reply.errorField == "events")
            #expect(reply.errorMessage.contains("10000"))
            let enough = (0..<10_000).map { Self.event($0) }.joined(separator: ",")
            let accepted = try await client.post("/v1/batches", key: service.ingest, #"{"events":[\#(enough)]}"#)
            #expect(accepted.errorField != "events", "\(accepted.text.prefix(300))")
        }
        #expect(try service.storedIDs().count <= 10_000)
    }

    @Test("an id longer than 200 characters or empty is 400 naming it, in a batch and alone")
    func idLength() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            let long = String(repeating: "x", count: 201)
            let batch = try await client.post(
                "/v1/batches", key: service.ingest, #"{"events":[\#(Self.event(1)),\#(Self.event(2, id: long))]}"#)
            #expect(batch.status == 400)
            #expect(batch.errorField == "events[1].id")
            let single = try await client.post("/v1/events", key: service.ingest, Self.event(1, id: long))
            #expect(single.status == 400)
            #expect(single.errorField == "id")
            let empty = try await client.post("/v1/events", key: service.ingest, Self.event(1, id: ""))
            #expect(empty.status == 400)
            #expect(empty.errorField == "id")
            let fits = try await client.post(
                "/v1/events", key: service.ingest, Sample.request("R9", id: String(repeating: "é", count: 200)))
            #expect(fits.status == 200, "\(fits.text)")
        }
        #expect(try service.storedIDs().count == 1)
    }

    @Test("a cursor the server did not return is 400 naming cursor; the returned ones page as before")
    func cursor() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            for name in ["A", "B", "C"] {
                _ = try await client.post("/v1/events", key: service.ingest, Sample.request(name))
            }
            for garbage in ["garbage", "B", "1", "", "%00"] {
                let reply = try await client.get("/v1/activities?cursor=\(garbage)", key: service.read)
                #expect(reply.status == 400, "cursor '\(garbage)': \(reply.text)")
                #expect(reply.errorField == "cursor")
            }
            let first = try await client.get("/v1/activities?limit=2", key: service.read)
            let cursor = try #require(first.json?["nextCursor"]?.stringValue)
            let second = try await client.get("/v1/activities?limit=2&cursor=\(cursor)", key: service.read)
            #expect(second.json?["activities"]?.arrayValue?.map { $0["activity"]?.stringValue } == ["C"])
            // One character changed is no longer a cursor.
            let tampered = String(cursor.dropLast()) + (cursor.last == "A" ? "B" : "A")
            #expect(try await client.get("/v1/activities?cursor=\(tampered)", key: service.read).status == 400)
        }
    }

    @Test("a time of the wrong type says so; no error names the runtime's types")
    func wrongTypes() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            let at = try await client.post(
                "/v1/events", key: service.ingest, #"{"stream":"activity:R1","type":"request","at":true,"data":{}}"#)
            #expect(at.status == 400)
            #expect(at.errorField == "at")
            #expect(at.errorMessage.contains("wrong type"), "\(at.errorMessage)")
            #expect(!at.errorMessage.contains("null"))
            let huge = try await client.post(
                "/v1/events", key: service.ingest, #"{"stream":"activity:R1","type":"request","at":1,"data":{"n":1e999}}"#)
            #expect(huge.status == 400)
            #expect(huge.errorField == "data.n", "\(huge.text)")
            // Worded as the CLI's import words it (one rule, `firstInterchangeProblem`), in a batch too.
            #expect(huge.errorMessage == "field 'data.n': expected a number a double can hold (RFC 7493), got 1e999")
            let inBatch = try await client.post(
                "/v1/batches", key: service.ingest,
                #"{"events":[{"stream":"activity:R1","type":"request","at":1,"data":{"n":[-1E999]}}]}"#)
            #expect(inBatch.status == 400)
            #expect(inBatch.errorField == "events[0].data.n[0]", "\(inBatch.text)")
            for reply in [at, huge] {
                #expect(!reply.errorMessage.contains("OpenAPI"), "\(reply.errorMessage)")
                #expect(!reply.errorMessage.contains("Swift"), "\(reply.errorMessage)")
            }
        }
    }

    @Test("times are exactly the schema's: real calendar dates, at most 9 fraction digits, Unix seconds under 1e11")
    func times() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            _ = try await client.post("/v1/events", key: service.ingest, Sample.request("R1"))
            let refused = [
                "0000-00-00T00:00:00Z", "2026-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "2026-11-20T24:00:00Z",
                "2026-11-20T21:00:00.1234567890Z", "123456789012", "1e5", "0x10", "2026-11-20",
            ]
            for text in refused {
                let reply = try await client.get("/v1/activities/R1/state?at=\(text)", key: service.read)
                #expect(reply.status == 400, "at=\(text): \(reply.status)")
                #expect(reply.errorField == "at")
            }
            let accepted = [
                "2024-02-29T00:00:00Z", "2026-11-20t21:00:00.123456789z", "2026-11-20T23:59:60Z", "-5", "99999999999.5",
                "2026-11-20T21:00:00%2B05:30",
            ]
            for text in accepted {
                let reply = try await client.get("/v1/activities/R1/state?at=\(text)", key: service.read)
                #expect(reply.errorField != "at", "at=\(text): \(reply.text)")
            }
            let body = try await client.post(
                "/v1/events", key: service.ingest,
                #"{"stream":"activity:R2","type":"request","at":"0000-00-00T00:00:00Z","data":{}}"#)
            #expect(body.status == 400)
            #expect(body.errorField == "at")
        }
    }

    @Test("a method the API does not declare on a path it does is 405 with Allow, before the key is checked")
    func undeclaredMethod() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            let trace = try await client.send(.trace, "/v1/events", key: nil)
            #expect(trace.status == 405)
            #expect(trace.errorCode == "methodNotAllowed")
            #expect(trace.errorMessage.contains("POST"))
            let delete = try await client.send(.delete, "/v1/activities/R1/state", key: service.read)
            #expect(delete.status == 405)
            #expect(delete.errorMessage.hasSuffix("allowed: GET"))
            #expect(try await client.get("/v1/activities/R1/nothing", key: service.read).status == 404)
        }
    }

    @Test("schema-valid odd input is accepted: from after to is an empty timeline, null optional members are absent")
    func validOddities() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            _ = try await client.post("/v1/events", key: service.ingest, Sample.request("R1"))
            let window = try await client.get(
                "/v1/activities/R1/timeline?from=2026-11-21T00:00:00Z&to=2026-11-20T00:00:00Z", key: service.read)
            #expect(window.status == 200, "\(window.text)")
            let nullID = try await client.post(
                "/v1/events", key: service.ingest,
                #"{"id":null,"source":null,"stream":"activity:R2","type":"dismiss","at":1763672400,"data":{"by":"user"}}"#)
            #expect(nullID.status != 400, "\(nullID.text)")
        }
    }

    @Test("verify's digest must have the published POSITION:HEX form; a truth feed must not be empty")
    func digestAndTruth() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            for digest in ["", "5", "5:abc", "-1:" + String(repeating: "a", count: 64), "1234567890123456789:" + String(repeating: "a", count: 64)] {
                let reply = try await client.get("/v1/verify?digest=\(digest)", key: service.admin)
                #expect(reply.status == 400, "digest '\(digest)'")
                #expect(reply.errorField == "digest")
            }
            let empty = try await client.post(
                "/v1/reconciliations?run=r1", key: service.admin, "", contentType: "application/x-ndjson")
            #expect(empty.status == 400)
            #expect(empty.errorField == "body")
        }
    }

    @Test("a 100k-character path is refused in the JSON error shape, not with an empty body")
    func hugePath() async throws {
        let binary = try #require(ServeProcess.binary(), "activity-ledger not found next to the test bundle")
        let directory = TemporaryDirectory(prefix: "serve-path")
        let server = try await ServeProcess.start(binary, db: directory.file("ledger.sqlite"), directory: directory)
        defer { server.stop() }
        let reply = try await offThePool {
            let connection = try RawConnection(port: server.port)
            connection.send("GET /v1/activities/\(String(repeating: "x", count: 100_000))/state HTTP/1.1\r\nHost: x\r\n\r\n")
            return connection.receiveUntilClosed().text
        }
        #expect(reply.hasPrefix("HTTP/1.1 4"), "\(reply.prefix(200))")
        let body = reply.components(separatedBy: "\r\n\r\n").dropFirst().joined()
        #expect(body.contains(#""error":{"#), "\(reply.prefix(300))")
        #expect(body.contains("too large"))
    }
}
