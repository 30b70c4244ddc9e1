import Foundation
import GRDB
import Ledger
import Testing

@Suite("API key storage")
struct APIKeyStoreTests {
    private func temporaryPath() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("ledger.sqlite").path
    }

    @Test("a created key authenticates, is stored only as a hash, and stops working once revoked")
    func lifecycle() throws {
        let path = try temporaryPath()
        let store = try APIKeyStore(path: path)
        let (secret, key) = try store.create(app: "com.example.rides", scopes: [.ingest, .read])
        #expect(secret.hasPrefix("al_"))
        #expect(secret.count == 46)
        #expect(try store.authenticate(secret)?.id == key.id)
        #expect(try store.authenticate(secret + "x") == nil)
        let stored = try DatabaseQueue(path: path).read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM api_keys")
        }
        #expect(stored.count == 1)
        #expect(!stored.description.contains(secret))
        #expect(try store.revoke(id: key.id))
        #expect(try store.authenticate(secret) == nil)
        #expect(try store.revoke(id: key.id) == false)
        #expect(try store.list().first?.revokedAt != nil)
    }

    @Test("keys are reopened from the same file and listed per app")
    func reopen() throws {
        let path = try temporaryPath()
        let (secret, _) = try APIKeyStore(path: path).create(app: "a", scopes: [.admin])
        _ = try APIKeyStore(path: path).create(app: "b", scopes: [.read])
        let reopened = try APIKeyStore(path: path)
        #expect(try reopened.authenticate(secret)?.app == "a")
        #expect(try reopened.list(app: "b").map(\.scopes) == [[.read]])
        #expect(try reopened.list().count == 2)
    }

    @Test("admin grants every scope, others only their own")
    func scopes() {
        let admin = APIKey(id: "1", app: "a", scopes: [.admin], createdAt: Date())
        let reader = APIKey(id: "2", app: "a", scopes: [.read], createdAt: Date())
        #expect(APIScope.allCases.allSatisfy(admin.allows))
        #expect(reader.allows(.read) && !reader.allows(.ingest) && !reader.allows(.admin))
        #expect(APIScope.parseList("ingest, read").scopes == [.ingest, .read])
        #expect(APIScope.parseList("ingest,write").unknown == "write")
    }
}
