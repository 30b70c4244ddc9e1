import ActivityModel
import Crypto
import Foundation
import Ledger
import LedgerTesting
import Testing

/// `reconcile nightly|resync --execute` through the real binary, against the fake APNs.
@Suite("Reconciliation sends its actions to APNs", .serialized)
struct APNsExecuteTests {
    typealias H = APNsProxyHarness

    /// An APNs auth key as Apple hands it out (PKCS#8 PEM), made with openssl.
    static func authKey(_ harness: H) async throws -> (String, P256.Signing.PublicKey) {
        let path = harness.directory.file("AuthKey_ABC123DEFG.p8")
        try await offThePool {
            try H.tool("/usr/bin/openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path])
        }
        let pem = try String(contentsOfFile: path, encoding: .utf8)
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        return (path, try P256.Signing.PrivateKey(pemRepresentation: pem).publicKey)
    }

    func execute(_ harness: H, _ arguments: [String], key: String, port: Int? = nil) async throws -> CommandRunner.Result {
        let runner = CommandRunner(executable: harness.keyed.binary, launcher: URL(fileURLWithPath: "/usr/bin/env"), prefix: [])
        let all =
            arguments + [
                "--app", H.app, "--db", harness.keyed.db, "--json", "--execute", "--apns-key-file", key,
                "--apns-key-id", "ABC123DEFG", "--apns-team-id", "TEAM123456", "--apns-upstream",
                "https://127.0.0.1:\(port ?? harness.fake.port)", "--apns-ca", harness.certificate,
            ]
        return try await offThePool { try runner.run(all) }
    }

    func execute(_ harness: H, _ arguments: [String], key: String) async throws -> ActivityModel.JSONValue {
        let result: CommandRunner.Result = try await execute(harness, arguments, key: key, port: nil)
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONParser.parse(result.stdout)
    }

    /// What reached the fake, without the sender's probe (`/3/device/` with no token).
    static func pushes(_ harness: H) throws -> [ActivityModel.JSONValue] {
        try harness.fake.received().filter { $0["path"]?.stringValue != "/3/device/" }
    }

    @Test("nightly --execute sends each action once with a valid ES256 token, records each push, and a re-run sends nothing")
    func nightly() async throws {
        let harness = try await H.start(prefix: "apns-nightly")
        defer { harness.fake.stop() }
        try await harness.importEvents(
            H.activity("RIDE-LEAK", token: "a1b2c3d4") + H.activity("RIDE-DEAD", token: "410abcde")
                + H.activity("RIDE-FINE", token: "a9b8c7d6"))
        let now = Int64(Date().timeIntervalSince1970)
        let truth = harness.directory.file("truth.jsonl")
        try [
            #"{"activity":"RIDE-LEAK","state":{"eta":0},"done":true,"at":\#(now)}"#,
            #"{"activity":"RIDE-DEAD","state":{"eta":0},"done":true,"at":\#(now)}"#,
            #"{"activity":"RIDE-FINE","state":{"eta":9},"done":false,"at":\#(now)}"#,
        ].joined(separator: "\n").write(toFile: truth, atomically: true, encoding: .utf8)
        let (keyFile, publicKey) = try await Self.authKey(harness)

        let first = try await execute(harness, ["reconcile", "nightly", "--truth", truth, "--run-id", "N-1"], key: keyFile)
        let executed = try #require(first["executed"]?.arrayValue)
        let byActivity = Dictionary(uniqueKeysWithValues: executed.map { ($0["activity"]?.stringValue ?? "", $0) })
        #expect(byActivity.keys.sorted() == ["RIDE-DEAD", "RIDE-LEAK"])
        #expect(byActivity["RIDE-LEAK"]?["status"]?.numberValue?.int64Value == 200)
        #expect(byActivity["RIDE-DEAD"]?["status"]?.numberValue?.int64Value == 410)
        #expect(byActivity["RIDE-DEAD"]?["reason"]?.stringValue == "Unregistered")

        let received = try Self.pushes(harness)
        #expect(received.count == 2)
        for request in received {
            let headers = try #require(request["headers"])
            #expect(headers["apns-topic"]?.stringValue == H.topic)
            #expect(headers["apns-push-type"]?.stringValue == "liveactivity")
            let aps = try JSONParser.parse(try #require(request["body"]?.stringValue))["aps"]
            #expect(aps?["event"]?.stringValue == "end")
            let authorization = try #require(headers["authorization"]?.stringValue)
            #expect(authorization.hasPrefix("bearer "))
            let parts = authorization.dropFirst("bearer ".count).split(separator: ".")
            #expect(parts.count == 3)
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Self.base64URL(parts[2])))
            #expect(publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)), "JWT does not verify")
        }
        let ledger = try harness.openLedger()
        let leak = try await ledger.audit(activity: "RIDE-LEAK", app: H.app)
        #expect(leak.deliveries.map(\.type) == [.end])
        #expect(leak.deliveries.map(\.verdict) == [.accepted])
        #expect(leak.deliveries.first?.pushes.count == 1)
        let dead = try await ledger.audit(activity: "RIDE-DEAD", app: H.app)
        #expect(dead.deliveries.first?.reason == "Unregistered")

        // The same run again: the recorded report, nothing sent, nothing appended.
        let again = try await execute(harness, ["reconcile", "nightly", "--truth", truth, "--run-id", "N-1"], key: keyFile)
        let results = try #require(again["executed"]?.arrayValue).map { $0["result"]?.stringValue }
        #expect(results == ["alreadySent", "alreadySent"])
        #expect(try Self.pushes(harness).count == 2, "an action was sent twice")
        #expect(try await ledger.audit(activity: "RIDE-LEAK", app: H.app).deliveries.first?.pushes.count == 1)
    }

    @Test("resync --execute sends the update the device is missing, once")
    func resync() async throws {
        let harness = try await H.start(prefix: "apns-resync")
        defer { harness.fake.stop() }
        let at = Int64(Date().timeIntervalSince1970) - 60
        try await harness.importEvents([
            #"{"stream":"activity:RIDE-R","type":"request","at":\#(at),"data":{"attributesType":"RideAttributes","attributes":{"ride":"R"},"content":{"state":{"eta":9}},"pushType":"token","installation":"INST-1"}}"#,
            #"{"stream":"activity:RIDE-R","type":"token","at":\#(at + 1),"data":{"token":"abcabc01"}}"#,
            #"{"stream":"activity:RIDE-R","type":"update","at":\#(at + 2),"data":{"content":{"state":{"eta":4}},"timestamp":\#(at + 2)}}"#,
        ])
        let snapshot = harness.directory.file("snapshot.json")
        try #"{"installation":"INST-1","at":\#(at + 30),"activities":[{"activity":"RIDE-R","attributesType":"RideAttributes","activityState":"active","contentTimestamp":\#(at)}]}"#
            .write(toFile: snapshot, atomically: true, encoding: .utf8)
        let (keyFile, _) = try await Self.authKey(harness)
        let first = try await execute(harness, ["reconcile", "resync", "--snapshot", snapshot], key: keyFile)
        let actions = try #require(first["actions"]?.arrayValue)
        #expect(actions.first?["action"]?.stringValue == "update")
        #expect(try #require(first["executed"]?.arrayValue).first?["status"]?.numberValue?.int64Value == 200)
        let received = try Self.pushes(harness)
        #expect(received.count == 1)
        #expect(received.first?["path"]?.stringValue == "/3/device/abcabc01")
        _ = try await execute(harness, ["reconcile", "resync", "--snapshot", snapshot], key: keyFile)
        #expect(try Self.pushes(harness).count == 1, "the update was sent twice")
    }

    @Test("with APNs unreachable nothing is sent or recorded as sent (exit 4), so the run sends once APNs answers")
    func unreachable() async throws {
        let harness = try await H.start(prefix: "apns-unreachable")
        defer { harness.fake.stop() }
        try await harness.importEvents(H.activity("RIDE-U", token: "a1b2c3d5"))
        let truth = harness.directory.file("truth.jsonl")
        try #"{"activity":"RIDE-U","state":{"eta":0},"done":true,"at":\#(Int64(Date().timeIntervalSince1970))}"#
            .write(toFile: truth, atomically: true, encoding: .utf8)
        let (keyFile, _) = try await Self.authKey(harness)
        let closed = 1  // nothing listens on port 1: connection refused
        let failed = try await execute(
            harness, ["reconcile", "nightly", "--truth", truth, "--run-id", "U-1"], key: keyFile, port: closed)
        #expect(failed.status == 4)
        #expect(failed.stderr.hasPrefix("activity-ledger: APNs did not answer a probe"), "\(failed.stderr)")
        #expect(failed.stderr.split(separator: "\n").count == 1)
        #expect(try JSONParser.parse(failed.stdout)["run"]?.stringValue == "U-1", "the report is still printed")
        let audit = try await harness.openLedger().audit(activity: "RIDE-U", app: H.app)
        #expect(audit.deliveries.isEmpty, "an end was recorded as sent")

        let again = try await execute(harness, ["reconcile", "nightly", "--truth", truth, "--run-id", "U-1"], key: keyFile)
        #expect(try #require(again["executed"]?.arrayValue).first?["status"]?.numberValue?.int64Value == 200)
        #expect(try Self.pushes(harness).count == 1)
    }

    static func base64URL(_ part: Substring) -> Data? {
        var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return Data(base64Encoded: text)
    }
}
