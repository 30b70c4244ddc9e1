import ActivityModel
import Foundation
import Ledger
import LedgerTesting
import Testing

/// `serve --apns-proxy-port` through the real binary, in front of a fake APNs over HTTP/2 + TLS, with curl as the
/// push library.
@Suite("APNs proxy", .serialized)
struct APNsProxyTests {
    typealias H = APNsProxyHarness

    /// Tokens whose first three digits make the fake answer 200, 400, 410 or 429.
    static let tokens = [
        "RIDE-OK": "a0b1c2d3e4f5a0b1c2d3e4f5a0b1c2d3", "RIDE-BAD": "400b1c2d3e4f5a0b1c2d3e4f5a0b1c2d",
        "RIDE-GONE": "410b1c2d3e4f5a0b1c2d3e4f5a0b1c2d", "RIDE-SLOW": "429b1c2d3e4f5a0b1c2d3e4f5a0b1c2d",
    ]

    @Test("a push passes through unchanged both ways and is recorded with its answer, for 200, 400, 410 and 429")
    func passThroughAndRecording() async throws {
        let harness = try await H.start(prefix: "apns-pass")
        defer { harness.fake.stop() }
        try await harness.importEvents(Self.tokens.sorted(by: { $0.key < $1.key }).flatMap { H.activity($0.key, token: $0.value) })
        let (server, port) = try await harness.serve()
        defer { server.stop() }

        var replies: [String: (PushReply, String, String)] = [:]
        for (activity, token) in Self.tokens {
            let apnsID = UUID().uuidString
            let body = H.update(eta: 3)
            let reply = try await PushClient.push(
                port: port, path: "/3/device/\(token)", headers: H.pushHeaders(apnsID: apnsID, key: harness.keyed.key),
                body: body, directory: harness.directory)
            replies[activity] = (reply, apnsID, body)
        }
        // What the caller got is what the fake answered.
        let expected = ["RIDE-OK": 200, "RIDE-BAD": 400, "RIDE-GONE": 410, "RIDE-SLOW": 429]
        for (activity, (reply, apnsID, _)) in replies {
            #expect(reply.status == expected[activity], "\(activity)")
            #expect(reply.httpVersion == "HTTP/2")
            #expect(reply.headers["apns-id"] == apnsID)
            #expect(reply.headers["apns-unique-id"]?.count == 36)
        }
        #expect(replies["RIDE-OK"]?.0.body == "")
        #expect(replies["RIDE-BAD"]?.0.body == #"{"reason":"BadDeviceToken"}"#)
        #expect(replies["RIDE-SLOW"]?.0.body == #"{"reason":"TooManyRequests"}"#)
        let gone = try JSONParser.parse(replies["RIDE-GONE"]!.0.body)
        #expect(gone["reason"]?.stringValue == "Unregistered")
        let goneAt = try #require(gone["timestamp"]?.numberValue?.int64Value)

        // What reached the fake: the caller's JWT, headers, path and body; never the ledger key.
        let received = try harness.fake.received()
        #expect(received.count == 4)
        for request in received {
            let headers = try #require(request["headers"])
            #expect(headers["x-ledger-key"] == nil)
            #expect(headers["authorization"]?.stringValue == H.jwt)
            #expect(headers["apns-topic"]?.stringValue == H.topic)
            #expect(headers["apns-push-type"]?.stringValue == "liveactivity")
            #expect(headers["apns-priority"]?.stringValue == "10")
            let apnsID = try #require(request["apnsId"]?.stringValue)
            let sent = try #require(replies.values.first { $0.1 == apnsID })
            #expect(request["body"]?.stringValue == sent.2)
            #expect(headers["apns-id"]?.stringValue == apnsID)
        }
        #expect(Set(received.compactMap { $0["path"]?.stringValue }) == Set(Self.tokens.values.map { "/3/device/\($0)" }))
        let log = try String(contentsOfFile: harness.fake.log, encoding: .utf8)
        #expect(!log.contains(harness.keyed.key))

        // What the ledger recorded: the update and its push, through the token index, with APNs' answer.
        for (activity, (_, apnsID, _)) in replies {
            let logged = try #require(await harness.waitForEvent(H.pushEventID(apnsID)), "\(activity) not recorded")
            #expect(logged.event.stream == .activity(activity))
            guard case .push(let push) = logged.event.data else {
                Issue.record("\(activity): not a push event")
                continue
            }
            #expect(push.status == expected[activity])
            #expect(push.apnsId == apnsID)
            #expect(push.token == Self.tokens[activity])
            #expect(push.priority == 10)
            if activity == "RIDE-GONE" { #expect(push.apnsTimestamp == Instant(milliseconds: goneAt)) }
        }
        let ledger = try harness.openLedger()
        let verdicts = [
            "RIDE-OK": ("accepted", nil), "RIDE-BAD": ("rejected", "BadDeviceToken"),
            "RIDE-GONE": ("rejected", "Unregistered"), "RIDE-SLOW": ("rejected", "TooManyRequests"),
        ]
        for (activity, (verdict, reason)) in verdicts {
            let audit = try await ledger.audit(activity: activity, app: H.app)
            #expect(audit.deliveries.count == 1, "\(activity)")
            #expect(audit.deliveries.first?.verdict.rawValue == verdict, "\(activity)")
            #expect(audit.deliveries.first?.reason == reason, "\(activity)")
        }
        #expect(try await H.metric("apns_proxy_recorded_total", port: server.port) == 4)
    }

    @Test("a retry reusing apns-id (429, then 200) is a second push of the same update, accepted; another push is its own")
    func retryReusingAPNsID() async throws {
        let harness = try await H.start(prefix: "apns-retry")
        defer { harness.fake.stop() }
        let slow = Self.tokens["RIDE-SLOW"]!, ok = Self.tokens["RIDE-OK"]!
        // One activity with two tokens: the fake answers the first 429 and the second 200.
        let at = Int64(Date().timeIntervalSince1970) - 30
        try await harness.importEvents(
            H.activity("RIDE-R", token: slow) + [
                #"{"stream":"activity:RIDE-R","type":"token","at":\#(at),"data":{"token":"\#(ok)"}}"#
            ])
        let (server, port) = try await harness.serve()
        defer { server.stop() }
        let apnsID = "aaaaaaaa-2222-3333-4444-555555555555"
        let body = H.update(eta: 3)
        var statuses: [Int] = []
        for (token, body) in [(slow, body), (ok, body), (ok, H.update(eta: 7))] {
            let reply = try await PushClient.push(
                port: port, path: "/3/device/\(token)", headers: H.pushHeaders(apnsID: apnsID, key: harness.keyed.key),
                body: body, directory: harness.directory)
            statuses.append(reply.status)
        }
        #expect(statuses == [429, 200, 200])
        let recorded = try await APNsProxyRecordingTests.waitForMetric(
            "apns_proxy_recorded_total", port: server.port, atLeast: 3)
        #expect(recorded)
        #expect(try await H.metric(#"apns_proxy_unrecorded_total{reason="invalid"}"#, port: server.port) == 0)
        let audit = try await harness.openLedger().audit(activity: "RIDE-R", app: H.app)
        #expect(audit.deliveries.map(\.verdict) == [.accepted, .accepted])
        #expect(audit.deliveries.map(\.pushes.count) == [2, 1])
    }

    @Test("a caller without an ingest key of the topic's app is refused and nothing is sent upstream")
    func refusals() async throws {
        let harness = try await H.start(prefix: "apns-refuse")
        defer { harness.fake.stop() }
        let readOnly = try await offThePool {
            try ServeProcess.run(
                harness.keyed.binary, ["keys", "create", "--app", H.app, "--scope", "read", "--db", harness.keyed.db])
        }
        let otherApp = try await offThePool {
            try ServeProcess.run(
                harness.keyed.binary,
                ["keys", "create", "--app", "com.example.other", "--scope", "ingest", "--db", harness.keyed.db])
        }
        let (server, port) = try await harness.serve()
        defer { server.stop() }
        let token = "/3/device/a0b1c2d3e4f5a0b1"
        let cases: [(String, [String: String], String, Int, String)] = [
            ("no key", H.pushHeaders(apnsID: UUID().uuidString, key: nil), token, 401, "MissingLedgerKey"),
            ("unknown key", H.pushHeaders(apnsID: UUID().uuidString, key: "al_nope"), token, 401, "BadLedgerKey"),
            ("read-only key", H.pushHeaders(apnsID: UUID().uuidString, key: readOnly), token, 403, "LedgerKeyScope"),
            ("key of another app", H.pushHeaders(apnsID: UUID().uuidString, key: otherApp), token, 403, "TopicNotKeyApp"),
            (
                "topic of another app",
                H.pushHeaders(apnsID: UUID().uuidString, key: harness.keyed.key, topic: "com.example.other.push-type.liveactivity"),
                token, 403, "TopicNotKeyApp"
            ),
            ("no topic", H.pushHeaders(apnsID: UUID().uuidString, key: harness.keyed.key).filter { $0.key != "apns-topic" }, token, 400, "MissingTopic"),
            ("token not hex", H.pushHeaders(apnsID: UUID().uuidString, key: harness.keyed.key), "/3/device/zz%20top", 400, "BadDeviceToken"),
            ("empty token", H.pushHeaders(apnsID: UUID().uuidString, key: harness.keyed.key), "/3/device/", 400, "BadDeviceToken"),
            ("unknown path", H.pushHeaders(apnsID: UUID().uuidString, key: harness.keyed.key), "/v1/events", 404, "BadPath"),
            (
                "broadcast of another app", H.pushHeaders(apnsID: UUID().uuidString, key: harness.keyed.key),
                "/4/broadcasts/apps/com.example.other", 403, "TopicNotKeyApp"
            ),
        ]
        for (name, headers, path, status, reason) in cases {
            let reply = try await PushClient.push(
                port: port, path: path, headers: headers, body: H.update(eta: 1), directory: harness.directory)
            #expect(reply.status == status, "\(name)")
            let body = try JSONParser.parse(reply.body)
            #expect(body["reason"]?.stringValue == reason, "\(name)")
            #expect(body["message"]?.stringValue?.isEmpty == false, "\(name)")
        }
        let big = String(repeating: "x", count: 70_000)
        let tooLarge = try await PushClient.push(
            port: port, path: token, headers: H.pushHeaders(apnsID: UUID().uuidString, key: harness.keyed.key),
            body: big, directory: harness.directory)
        #expect(tooLarge.status == 413)
        #expect(try harness.fake.received().isEmpty, "a refused push reached APNs")
    }

    @Test("a repeated apns-topic or x-ledger-key is refused 400, a broadcast with another app's topic 403; nothing is sent")
    func repeatedHeadersAndBroadcastTopic() async throws {
        let harness = try await H.start(prefix: "apns-repeat")
        defer { harness.fake.stop() }
        let (server, port) = try await harness.serve()
        defer { server.stop() }
        let other = "com.example.other.push-type.liveactivity"
        let headers = H.pushHeaders(apnsID: UUID().uuidString, key: harness.keyed.key)
        let cases: [(String, [String: String], [(String, String)], String, Int, String)] = [
            (
                "two topics, the key's app's first", headers.filter { $0.key != "apns-topic" },
                [("apns-topic", H.topic), ("apns-topic", other)], "/3/device/a0b1c2d3", 400, "RepeatedHeader"
            ),
            (
                "two ledger keys", headers.filter { $0.key != "x-ledger-key" },
                [("x-ledger-key", harness.keyed.key), ("x-ledger-key", "al_other")], "/3/device/a0b1c2d3", 400,
                "RepeatedHeader"
            ),
            (
                "two apns-ids", headers.filter { $0.key != "apns-id" },
                [("apns-id", UUID().uuidString), ("apns-id", UUID().uuidString)], "/3/device/a0b1c2d3", 400,
                "RepeatedHeader"
            ),
            (
                "a broadcast of the key's app with another app's topic",
                H.pushHeaders(apnsID: UUID().uuidString, key: harness.keyed.key, topic: other), [],
                "/4/broadcasts/apps/\(H.app)", 403, "TopicNotKeyApp"
            ),
        ]
        for (name, headers, repeated, path, status, reason) in cases {
            let reply = try await PushClient.push(
                port: port, path: path, headers: headers, repeated: repeated, body: H.update(eta: 1),
                directory: harness.directory)
            #expect(reply.status == status, "\(name)")
            let body = try JSONParser.parse(reply.body)
            #expect(body["reason"]?.stringValue == reason, "\(name)")
            if let header = repeated.first?.0 {
                #expect(body["message"]?.stringValue?.contains(header) == true, "\(name)")
            }
        }
        #expect(try harness.fake.received().isEmpty, "a refused push reached APNs")
    }

    @Test("a token is attributed whatever its hex case: lower-case first, then as sent, then upper-case")
    func tokenCase() async throws {
        let harness = try await H.start(prefix: "apns-case")
        defer { harness.fake.stop() }
        try await harness.importEvents(
            H.activity("RIDE-LOWER", token: "abcdef01aa") + H.activity("RIDE-UPPER", token: "ABCDEF02BB"))
        let (server, port) = try await harness.serve()
        defer { server.stop() }
        let cases = [
            ("RIDE-LOWER", "ABCDEF01AA", "abcdef01aa"), ("RIDE-LOWER", "AbCdEf01aA", "abcdef01aa"),
            ("RIDE-UPPER", "abcdef02bb", "ABCDEF02BB"),
        ]
        for (activity, sent, held) in cases {
            let apnsID = UUID().uuidString
            let reply = try await PushClient.push(
                port: port, path: "/3/device/\(sent)", headers: H.pushHeaders(apnsID: apnsID, key: harness.keyed.key),
                body: H.update(eta: 2), directory: harness.directory)
            #expect(reply.status == 200)
            let logged = try #require(await harness.waitForEvent(H.pushEventID(apnsID)), "\(sent) not recorded")
            #expect(logged.event.stream == .activity(activity))
            guard case .push(let push) = logged.event.data else { continue }
            #expect(push.token == held, "the push names the token as the ledger holds it")
        }
        // APNs got the path as sent.
        #expect(try harness.fake.received().compactMap { $0["path"]?.stringValue }.contains("/3/device/ABCDEF01AA"))
    }

    @Test("a key revoked while serve runs stops working at the proxy within a second")
    func revocation() async throws {
        let harness = try await H.start(prefix: "apns-revoke")
        defer { harness.fake.stop() }
        let (server, port) = try await harness.serve()
        defer { server.stop() }
        let before = try await PushClient.push(
            port: port, path: "/3/device/a0b1c2d3", headers: H.pushHeaders(apnsID: UUID().uuidString, key: harness.keyed.key),
            body: H.update(eta: 1), directory: harness.directory)
        #expect(before.status == 200)
        let listed = try await offThePool {
            try ServeProcess.run(harness.keyed.binary, ["keys", "list", "--db", harness.keyed.db, "--json"])
        }
        let id = try #require(try JSONParser.parse(listed).arrayValue?.first?["id"]?.stringValue)
        _ = try await offThePool { try ServeProcess.run(harness.keyed.binary, ["keys", "revoke", id, "--db", harness.keyed.db]) }
        try await Task.sleep(for: .seconds(1))
        let after = try await PushClient.push(
            port: port, path: "/3/device/a0b1c2d3", headers: H.pushHeaders(apnsID: UUID().uuidString, key: harness.keyed.key),
            body: H.update(eta: 2), directory: harness.directory)
        #expect(after.status == 401)
        #expect(try harness.fake.received().count == 1)
    }

    @Test("a broadcast push is forwarded and recorded on its channel's stream")
    func broadcast() async throws {
        let harness = try await H.start(prefix: "apns-broadcast")
        defer { harness.fake.stop() }
        let (server, port) = try await harness.serve()
        defer { server.stop() }
        let apnsID = UUID().uuidString
        var headers = H.pushHeaders(apnsID: apnsID, key: harness.keyed.key)
        headers["apns-channel-id"] = "dHN0LXNyY2gtY2hubA=="
        let reply = try await PushClient.push(
            port: port, path: "/4/broadcasts/apps/\(H.app)", headers: headers, body: H.update(eta: 6),
            directory: harness.directory)
        #expect(reply.status == 200)
        #expect(try harness.fake.received().first?["path"]?.stringValue == "/4/broadcasts/apps/\(H.app)")
        let logged = try #require(await harness.waitForEvent(H.pushEventID(apnsID)))
        #expect(logged.event.stream == .channel("dHN0LXNyY2gtY2hubA=="))
    }

    @Test("with APNs down a push is answered 502 and not recorded; once APNs is back the next push goes through on a new connection")
    func upstreamDownAndBack() async throws {
        let harness = try await H.start(prefix: "apns-down")
        try await harness.importEvents(H.activity("RIDE-UP", token: "abcdef02"))
        let (server, port) = try await harness.serve()
        defer { server.stop() }
        let push = { (apnsID: String) in
            try await PushClient.push(
                port: port, path: "/3/device/abcdef02", headers: H.pushHeaders(apnsID: apnsID, key: harness.keyed.key),
                body: H.update(eta: 4), directory: harness.directory)
        }
        let first = UUID().uuidString, down = UUID().uuidString, back = UUID().uuidString
        #expect(try await push(first).status == 200)

        harness.fake.stop()
        let refused = try await push(down)
        #expect(refused.status == 502)
        #expect(try JSONParser.parse(refused.body)["reason"]?.stringValue == "UpstreamUnavailable")

        let again = try await FakeAPNsProcess.start(
            directory: harness.directory, certificate: harness.certificate, privateKey: harness.privateKey,
            port: harness.fake.port, name: "fake-apns-again")
        defer { again.stop() }
        let reply = try await push(back)
        #expect(reply.status == 200)
        #expect(reply.headers["apns-id"] == back)
        #expect(try again.received().count == 1)

        #expect(try await harness.waitForEvent(H.pushEventID(back)) != nil)
        #expect(try await harness.waitForEvent(H.pushEventID(first)) != nil)
        #expect(try await harness.waitForEvent(H.pushEventID(down), limit: .milliseconds(300)) == nil)
        #expect(try await H.metric("apns_proxy_upstream_failures_total", port: server.port) == 1)
    }

    @Test("a push whose body stalls is answered 408 after --body-timeout, nothing is sent upstream, and the proxy keeps answering")
    func stalledBody() async throws {
        let harness = try await H.start(prefix: "apns-stall")
        defer { harness.fake.stop() }
        let (server, port) = try await harness.serve(arguments: ["--body-timeout", "1"])
        defer { server.stop() }
        // curl streams its standard input as the body (-T -) from a pipe that stays empty for 2.5 s, then ends. curl
        // reads that pipe blocking, so it sees the answer only then: had the proxy not answered 408 after 1 s, the
        // push would have been complete (empty) at 2.5 s and forwarded.
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let headerFile = harness.directory.file("stalled-headers")
        var arguments = ["-s", "--http2-prior-knowledge", "-X", "POST", "-T", "-", "-D", headerFile, "-o", "/dev/null"]
        for (name, value) in H.pushHeaders(apnsID: UUID().uuidString, key: harness.keyed.key) {
            arguments += ["-H", "\(name): \(value)"]
        }
        arguments.append("http://127.0.0.1:\(port)/3/device/abcdef03")
        let curl = try ChildProcess(URL(fileURLWithPath: "/usr/bin/curl"), arguments, stdin: .descriptor(ends[0]))
        close(ends[0])
        try await Task.sleep(for: .milliseconds(2500))
        close(ends[1])
        let deadline = ContinuousClock.now + .seconds(10)
        while curl.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if curl.isRunning { curl.terminate() }
        _ = curl.waitUntilExit()
        let head = (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? ""
        #expect(head.hasPrefix("HTTP/2 408"), "\(head)")
        #expect(try harness.fake.received().isEmpty)

        let after = try await PushClient.push(
            port: port, path: "/3/device/abcdef03", headers: H.pushHeaders(apnsID: UUID().uuidString, key: harness.keyed.key),
            body: H.update(eta: 5), directory: harness.directory)
        #expect(after.status == 200)
    }

    @Test("the proxy speaks HTTP/2 over TLS (ALPN h2) when given a certificate")
    func tls() async throws {
        let harness = try await H.start(prefix: "apns-tls")
        defer { harness.fake.stop() }
        try await harness.importEvents(H.activity("RIDE-TLS", token: "abcdef01"))
        let (server, port) = try await harness.serve(tls: true)
        defer { server.stop() }
        let apnsID = UUID().uuidString
        let reply = try await PushClient.push(
            port: port, path: "/3/device/abcdef01", headers: H.pushHeaders(apnsID: apnsID, key: harness.keyed.key),
            body: H.update(eta: 2), caCertificate: harness.certificate, directory: harness.directory)
        #expect(reply.status == 200)
        #expect(reply.httpVersion == "HTTP/2")
        #expect(try await harness.waitForEvent(H.pushEventID(apnsID)) != nil)
    }
}
