import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import LedgerServer
import LedgerTesting
import Logging
import NIOCore
import Testing

@Suite("Log lines are safe to read")
struct LogSafetyTests {
    @Test("control characters are escaped: a newline cannot forge a line, a NUL is not written raw")
    func escaping() {
        #expect(LogText.escaped("plain text, ümlauts and emoji 🚕") == "plain text, ümlauts and emoji 🚕")
        #expect(LogText.escaped("I-1\n2026 critical forged") == "I-1\\n2026 critical forged")
        #expect(LogText.escaped("a\u{0}b\r\t\u{1B}[31m\u{7F}\u{85}\u{2028}") == "a\\u{0}b\\r\\t\\u{1b}[31m\\u{7f}\\u{85}\\u{2028}")
        #expect(LogText.escaped(#"back\slash"#) == #"back\\slash"#)
    }

    @Test("an API key secret is cut to a prefix wherever it appears in a line")
    func secrets() {
        let secret = "al_" + String(repeating: "Ab9-_", count: 9)  // 48 characters
        #expect(LogText.redactingSecrets("key \(secret) refused") == "key al_Ab9…(48) refused")
        #expect(LogText.redactingSecrets("al_short and al_") == "al_short and al_")
    }

    @Test("the line handler escapes the message, metadata keys and values")
    func handler() {
        let handler = LineLogHandler(label: "serve", level: .debug, metadataProvider: nil)
        let event = LogEvent(
            level: .info, message: "resync planned\nT critical forged", metadata: ["ledger.run\n": "resync:I\u{0}:x"],
            source: "test", file: #fileID, function: #function, line: #line)
        let line = handler.line(event, time: "T")
        #expect(line == "T info serve: ledger.run\\n=resync:I\\u{0}:x resync planned\\nT critical forged\n")
    }

    @Test("on LOG_LEVEL=debug the real server writes one line per event, no NUL, no secret and no whole token")
    func realServer() async throws {
        let binary = try #require(ServeProcess.binary(), "activity-ledger not found next to the test bundle")
        let directory = TemporaryDirectory(prefix: "serve-logs")
        let db = directory.file("ledger.sqlite")
        let log = directory.file("serve.err")
        let key = try await offThePool {
            try ServeProcess.run(binary, ["keys", "create", "--app", "com.example.rides", "--scope", "admin", "--db", db])
        }
        let server = try await ServeProcess.start(
            binary, db: db, directory: directory, environment: ["LOG_LEVEL": "debug"], log: log)
        let token = String(repeating: "a1b2c3d4", count: 8)
        let unknownKey = "al_" + String(repeating: "Zz09", count: 11)
        do {
            defer { server.stop() }
            let client = TestClient(host: "127.0.0.1", port: server.port, configuration: .init(timeout: .seconds(10)))
            client.connect()
            defer { Task { try? await client.shutdown() } }
            let headers: HTTPFields = [.authorization: "Bearer \(key)", .contentType: "application/json"]
            let forged = "I-1\n2026-11-20T21:00:00+0000 critical activity-ledger.serve: forged\u{0}"
            let installation = String(data: try JSONSerialization.data(withJSONObject: [forged], options: []), encoding: .utf8)!
                .dropFirst().dropLast()
            let bodies: [(String, String)] = [
                ("/v1/events", Sample.request("RIDE-1")),
                ("/v1/events", #"{"stream":"activity:RIDE-1","type":"token","at":1763672401,"data":{"token":"\#(token)","environment":"production"}}"#),
                ("/v1/apns", #"{"at":"2026-11-20T21:06:00Z","request":{"token":"\#(token)","headers":{"apns-push-type":"liveactivity","apns-id":"x1"},"payload":{"aps":{"event":"update","timestamp":1763672760,"content-state":{"eta":3}}}},"response":{"status":410,"timestamp":1763672760000}}"#),
                ("/v1/resync", #"{"installation":\#(installation),"at":"2026-11-20T21:10:00Z","activities":[]}"#),
                ("/v1/resync", #"{"installation":\#(installation),"at":"2026-11-20T21:10:00Z","activities":[{"activity":"RIDE-1","attributesType":"RideAttributes","activityState":"active","token":"\#(token)"}]}"#),
            ]
            for (path, body) in bodies {
                _ = try await client.post(path, headers: headers, body: ByteBuffer(string: body))
            }
            _ = try await client.get("/v1/activities?token=\(token)", headers: headers)
            _ = try await client.get("/v1/activities/RIDE-1/state", headers: [.authorization: "Bearer \(unknownKey)"])
            _ = try await client.get("/v1/activities/RIDE-1/timeline", headers: headers)
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: log))
        let text = String(decoding: bytes, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count > 5, "too little was logged to test anything:\n\(text)")
        // The resync's run id (`resync:<installation>:<at>`) is logged, when the ledger takes that installation.
        if text.contains("resync planned") {
            #expect(text.contains(#"I-1\n2026-11-20T21:00:00+0000 critical"#), "\(text)")
        }
        #expect(!bytes.contains(0), "a NUL byte was written raw")
        let timestamped = #/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{4} (trace|debug|info|notice|warning|error|critical) /#
        for line in lines {
            #expect(line.firstMatch(of: timestamped) != nil, "a line that is not a log event: \(line)")
            #expect(!line.hasPrefix("2026-11-20T21:00:00+0000 critical"), "a client's field forged a line: \(line)")
        }
        #expect(!text.contains(key), "an API key secret was logged")
        #expect(!text.contains(unknownKey), "a presented secret was logged")
        #expect(!text.contains(token), "a whole push token was logged")
    }
}
