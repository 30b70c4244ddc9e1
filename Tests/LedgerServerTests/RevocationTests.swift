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
}
