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
        let metadata = Caller.$credentials.withValue(Caller.Credentials(key: key)) { LedgerServerApp.logMetadataProvider.get() }
        #expect(metadata["ledger.app"] == .string("com.example.rides"))
        #expect(metadata["ledger.key"] == .string("k123"))
    }

    @Test("a log line carries the logger's, the caller's and the event's metadata, sorted, after time, level and label")
    func lineFormat() throws {
        let key = APIKey(id: "k9", app: "com.example.food", scopes: [.ingest], createdAt: Date())
        var handler = LineLogHandler(
            label: "activity-ledger.serve", level: .info, metadataProvider: LedgerServerApp.logMetadataProvider)
        handler[metadataKey: "hb.request.id"] = "r1"
        handler[metadataKey: "http.status"] = "200"
        let event = LogEvent(
            level: .warning, message: "slow commit", metadata: ["http.status": "503"], source: "test", file: #fileID,
            function: #function, line: #line)
        let line = Caller.$credentials.withValue(Caller.Credentials(key: key)) { handler.line(event, time: "T") }
        #expect(line == "T warning activity-ledger.serve: hb.request.id=r1 http.status=503 ledger.app=com.example.food ledger.key=k9 slow commit\n")
        #expect(handler[metadataKey: "hb.request.id"] == "r1")
    }
}
