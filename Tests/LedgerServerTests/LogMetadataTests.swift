import Foundation
import Ledger
@testable import LedgerServer
import Logging
import Testing

@Suite("Request log metadata")
struct LogMetadataTests {
    @Test("log lines written while a key's request is handled carry its app and key id, never the secret")
    func callerMetadata() throws {
        let key = APIKey(id: "k123", app: "com.example.rides", scopes: [.read], createdAt: Date())
        #expect(LedgerServerApp.logMetadataProvider.get().isEmpty)
        let metadata = Caller.$key.withValue(key) { LedgerServerApp.logMetadataProvider.get() }
        #expect(metadata["ledger.app"] == .string("com.example.rides"))
        #expect(metadata["ledger.key"] == .string("k123"))
    }
}
