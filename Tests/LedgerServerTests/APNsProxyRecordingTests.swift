import ActivityModel
import Foundation
import Ledger
import LedgerTesting
import Testing

/// How the proxy records when the ledger cannot yet: unknown tokens, an unwritable ledger, a kill -9.
@Suite("APNs proxy recording off the response path", .serialized)
struct APNsProxyRecordingTests {
    typealias H = APNsProxyHarness

    @Test("a push to a token the ledger does not know yet is held and recorded once the token arrives; past the hold it is counted as unattributed")
    func unknownTokens() async throws {
        let harness = try await H.start(prefix: "apns-hold")
        defer { harness.fake.stop() }
        let log = harness.directory.file("serve.log")
        let (server, port) = try await harness.serve(arguments: ["--apns-proxy-hold", "20"], log: log)
        defer { server.stop() }

        let later = "beef0001", never = "beef0002"
        let laterID = UUID().uuidString, neverID = UUID().uuidString
        for (token, apnsID) in [(later, laterID), (never, neverID)] {
            let reply = try await PushClient.push(
                port: port, path: "/3/device/\(token)", headers: H.pushHeaders(apnsID: apnsID, key: harness.keyed.key),
                body: H.update(eta: 5), directory: harness.directory)
            #expect(reply.status == 200, "the caller's answer does not wait for the ledger")
        }
        // The app reports its activity and token after the push went out (beside the running service), well within
        // the hold: 20 s, as the import's process may take seconds on a machine busy with the other suites (with a
        // 10 s hold and a 10 s wait the push was not recorded once in CI's full server suite, at half speed).
        try await harness.importEvents(H.activity("RIDE-LATE", token: later))
        let recorded = try #require(await harness.waitForEvent(H.pushEventID(laterID), limit: .seconds(20)))
        #expect(recorded.event.stream == .activity("RIDE-LATE"))
        let audit = try await harness.openLedger().audit(activity: "RIDE-LATE", app: H.app)
        #expect(audit.deliveries.map(\.verdict) == [.accepted])

        // The other token never appears: after the 20 s hold it is counted and logged, and nothing is recorded.
        let deadline = ContinuousClock.now + .seconds(35)
        var unattributed = 0.0
        while ContinuousClock.now < deadline {
            unattributed = try await H.metric(#"apns_proxy_unrecorded_total{reason="unattributed"}"#, port: server.port)
            if unattributed > 0 { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(unattributed == 1)
        #expect(try await H.metric("apns_proxy_recorded_total", port: server.port) == 1)
        #expect(try await harness.waitForEvent(H.pushEventID(neverID), limit: .milliseconds(100)) == nil)
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(text.contains("no activity has push token beef0002"))
    }

    @Test("with the ledger unwritable, pushes keep flowing at full speed; failures are counted and logged rate-limited, and every push is recorded once it writes again")
    func unwritableLedger() async throws {
        let harness = try await H.start(prefix: "apns-locked")
        defer { harness.fake.stop() }
        try await harness.importEvents(H.activity("RIDE-L", token: "cafe0001"))
        let log = harness.directory.file("serve.log")
        // Recording waits up to 2 s for the lock, then fails: were it on the response path, each push would take 2 s.
        let (server, port) = try await harness.serve(arguments: ["--busy-timeout", "2"], log: log)
        defer { server.stop() }
        let warm = try await PushClient.push(
            port: port, path: "/3/device/cafe0001", headers: H.pushHeaders(apnsID: UUID().uuidString, key: harness.keyed.key),
            body: H.update(eta: 9), directory: harness.directory)
        #expect(warm.status == 200)
        #expect(try await Self.waitForMetric("apns_proxy_recorded_total", port: server.port, atLeast: 1))

        // Every hold below lasts until the test has seen what it waits for (a fixed hold can end before a push
        // arrives on a machine the other suites keep busy).
        let lock = try await offThePool { try WriteLockHolder(path: harness.keyed.db, seconds: 120) }
        var slowest = Duration.zero
        for eta in 0..<8 {
            let reply = try await PushClient.push(
                port: port, path: "/3/device/cafe0001",
                headers: H.pushHeaders(apnsID: UUID().uuidString, key: harness.keyed.key), body: H.update(eta: eta),
                directory: harness.directory)
            #expect(reply.status == 200)
            slowest = max(slowest, reply.took)
        }
        #expect(slowest < .seconds(1), "a push waited for the locked ledger: \(slowest)")
        let counted = try await Self.waitForMetric(
            #"apns_proxy_record_failures_total{reason="storage"}"#, port: server.port, atLeast: 1)
        lock.release()
        try await offThePool { lock.waitUntilReleased() }
        let failures = try await H.metric(#"apns_proxy_record_failures_total{reason="storage"}"#, port: server.port)
        #expect(counted && failures >= 1, "no storage failure counted")
        // Held and retried every second: once the ledger writes again, every push is recorded, and later ones too.
        let after = UUID().uuidString
        let reply = try await PushClient.push(
            port: port, path: "/3/device/cafe0001", headers: H.pushHeaders(apnsID: after, key: harness.keyed.key),
            body: H.update(eta: 20), directory: harness.directory)
        #expect(reply.status == 200)
        #expect(try await harness.waitForEvent(H.pushEventID(after)) != nil)
        #expect(try await Self.waitForMetric("apns_proxy_recorded_total", port: server.port, atLeast: 10), "a push was lost")
        #expect(try await H.metric("apns_proxy_recorded_total", port: server.port) == 10)
        #expect(try await H.metric(#"apns_proxy_unrecorded_total{reason="storage"}"#, port: server.port) == 0)
        #expect(try harness.fake.received().count == 10)
        let audit = try await harness.openLedger().audit(activity: "RIDE-L", app: H.app)
        #expect(audit.deliveries.count == 10)
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            .filter { $0.contains("APNs exchange not recorded") }
        #expect(!lines.isEmpty)
        #expect(lines.count < Int(failures) || failures == 1, "\(lines.count) log lines for \(failures) failures: not rate-limited")
    }

    @Test("a push the ledger cannot write within the hold is given up and counted")
    func storageGivesUp() async throws {
        let harness = try await H.start(prefix: "apns-giveup")
        defer { harness.fake.stop() }
        try await harness.importEvents(H.activity("RIDE-G", token: "cafe0002"))
        let (server, port) = try await harness.serve(arguments: ["--busy-timeout", "0.5", "--apns-proxy-hold", "2"])
        defer { server.stop() }
        let lock = try await offThePool { try WriteLockHolder(path: harness.keyed.db, seconds: 120) }
        let apnsID = UUID().uuidString
        let reply = try await PushClient.push(
            port: port, path: "/3/device/cafe0002", headers: H.pushHeaders(apnsID: apnsID, key: harness.keyed.key),
            body: H.update(eta: 1), directory: harness.directory)
        #expect(reply.status == 200)
        #expect(
            try await Self.waitForMetric(#"apns_proxy_unrecorded_total{reason="storage"}"#, port: server.port, atLeast: 1))
        lock.release()
        try await offThePool { lock.waitUntilReleased() }
        try await Task.sleep(for: .seconds(2))
        #expect(try await harness.waitForEvent(H.pushEventID(apnsID), limit: .milliseconds(100)) == nil)
        #expect(try await H.metric("apns_proxy_recorded_total", port: server.port) == 0)
    }

    @Test("a push answered but not recorded yet when serve is killed -9 is recorded once after the restart, and not sent again")
    func killNineBetweenForwardAndRecord() async throws {
        let harness = try await H.start(prefix: "apns-kill")
        defer { harness.fake.stop() }
        try await harness.importEvents(H.activity("RIDE-K", token: "dead0001"))
        let (server, port) = try await harness.serve(arguments: ["--busy-timeout", "30"])
        // The lock holds the recorder between the forward and the record for as long as the test needs.
        let lock = try await offThePool { try WriteLockHolder(path: harness.keyed.db, seconds: 120) }
        let apnsID = UUID().uuidString
        let reply = try await PushClient.push(
            port: port, path: "/3/device/dead0001", headers: H.pushHeaders(apnsID: apnsID, key: harness.keyed.key),
            body: H.update(eta: 4), directory: harness.directory)
        #expect(reply.status == 200)
        try await Task.sleep(for: .milliseconds(300))
        try await offThePool { server.killNine() }
        #expect(
            try await harness.waitForEvent(H.pushEventID(apnsID), limit: .milliseconds(100)) == nil,
            "recorded before the kill: the test proves nothing")
        lock.release()
        try await offThePool { lock.waitUntilReleased() }

        let (restarted, _) = try await harness.serve(name: "serve-again")
        var stopped = false
        defer { if !stopped { restarted.stop() } }
        let logged = try #require(await harness.waitForEvent(H.pushEventID(apnsID)), "lost by the kill")
        #expect(logged.event.stream == .activity("RIDE-K"))
        let audit = try await harness.openLedger().audit(activity: "RIDE-K", app: H.app)
        #expect(audit.deliveries.map(\.verdict) == [.accepted])
        #expect(audit.deliveries.first?.pushes.count == 1)
        #expect(try harness.fake.received().count == 1, "the push was sent to APNs again")
        // A graceful stop with everything recorded leaves no journal behind.
        restarted.stop()
        stopped = true
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: harness.directory.path)
            .filter { $0.contains("apns-journal") && $0.hasSuffix(".jsonl") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    static func waitForMetric(_ name: String, port: Int, atLeast value: Double, limit: Duration = .seconds(15)) async throws
        -> Bool
    {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try await H.metric(name, port: port) >= value { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }
}
