import Foundation
import HTTPTypes
import HummingbirdTesting
import LedgerTesting
import NIOCore
import Testing

@Suite("Key revocation on a running server")
struct RevocationTests {
    @Test("a key revoked by the CLI in another process stops working within a second, and stays revoked")
    func revokedByCLI() async throws {
        let binary = try #require(ServeProcess.binary(), "activity-ledger not found next to the test bundle")
        let directory = TemporaryDirectory(prefix: "serve-revoke")
        let db = directory.file("ledger.sqlite")
        let created = try await offThePool {
            try ServeProcess.run(binary, ["keys", "create", "--app", "com.example.rides", "--scope", "read", "--db", db, "--json"])
        }
        let json = try JSONSerialization.jsonObject(with: Data(created.utf8)) as? [String: Any]
        let secret = try #require(json?["key"] as? String, "\(created)")
        let id = try #require(json?["id"] as? String, "\(created)")
        let server = try await ServeProcess.start(binary, db: db, directory: directory)
        defer { server.stop() }

        let client = TestClient(host: "127.0.0.1", port: server.port, configuration: .init(timeout: .seconds(10)))
        client.connect()
        defer { Task { try? await client.shutdown() } }
        let headers: HTTPFields = [.authorization: "Bearer \(secret)"]
        func status() async throws -> UInt {
            UInt(try await client.get("/v1/activities", headers: headers).status.code)
        }
        // Warm the cache: the key is in use right up to the revocation.
        for _ in 0..<20 { #expect(try await status() == 200) }
        try await offThePool { _ = try ServeProcess.run(binary, ["keys", "revoke", id, "--db", db]) }
        let revoked = ContinuousClock.now
        var firstRefusal: Duration?
        var afterRefusal: [UInt] = []
        while ContinuousClock.now - revoked < .milliseconds(1500) {
            let code = try await status()
            if firstRefusal == nil, code == 401 { firstRefusal = ContinuousClock.now - revoked }
            if firstRefusal != nil { afterRefusal.append(code) }
        }
        let refusedAfter = try #require(firstRefusal, "the revoked key still worked 1.5 s after 'keys revoke' returned")
        #expect(refusedAfter < .seconds(1), "the revoked key worked for \(refusedAfter)")
        #expect(afterRefusal.allSatisfy { $0 == 401 })
    }

    /// Found by a probe: a poll opened before `keys revoke` answered with the events appended 4 s after it.
    @Test("a feed long-poll whose key is revoked while it waits answers 401, not the events appended since")
    func revokedWhileWaiting() async throws {
        let binary = try #require(ServeProcess.binary(), "activity-ledger not found next to the test bundle")
        let directory = TemporaryDirectory(prefix: "serve-revoke-poll")
        let db = directory.file("ledger.sqlite")
        func create(_ scope: String) async throws -> (secret: String, id: String) {
            let created = try await offThePool {
                try ServeProcess.run(binary, ["keys", "create", "--app", "com.example.rides", "--scope", scope, "--db", db, "--json"])
            }
            let json = try JSONSerialization.jsonObject(with: Data(created.utf8)) as? [String: Any]
            return (try #require(json?["key"] as? String), try #require(json?["id"] as? String))
        }
        let reader = try await create("read")
        let writer = try await create("ingest")
        let server = try await ServeProcess.start(binary, db: db, directory: directory)
        defer { server.stop() }
        let pollClient = TestClient(host: "127.0.0.1", port: server.port, configuration: .init(timeout: .seconds(30)))
        pollClient.connect()
        let client = TestClient(host: "127.0.0.1", port: server.port, configuration: .init(timeout: .seconds(10)))
        client.connect()
        defer { Task { try? await pollClient.shutdown(); try? await client.shutdown() } }
        let poll = Task {
            try await pollClient.get("/v1/feed?after=0&wait=8", headers: [.authorization: "Bearer \(reader.secret)"])
        }
        try await Task.sleep(for: .milliseconds(500))
        try await offThePool { _ = try ServeProcess.run(binary, ["keys", "revoke", reader.id, "--db", db]) }
        try await Task.sleep(for: .seconds(1))  // past the key cache's TTL
        let body = ByteBuffer(string: Sample.request("SECRET-AFTER-REVOKE"))
        let appended = try await client.post(
            "/v1/events", headers: [.authorization: "Bearer \(writer.secret)", .contentType: "application/json"], body: body)
        #expect(appended.status.code == 200)
        let answer = try await poll.value
        let text = answer.body.map { String(buffer: $0) } ?? ""
        #expect(answer.status.code == 401, "\(answer.status) \(text)")
        #expect(!text.contains("SECRET-AFTER-REVOKE"))
    }
}
