import ActivityModel
import Foundation
import Ledger
import LedgerTesting
import Logging

/// The pieces of an APNs proxy test: a self-signed certificate, the fake APNs (`ledger-bench fake-apns`, HTTP/2
/// over TLS), `serve` with the proxy in front of it, and curl as the push client (HTTP/2 with prior knowledge, or
/// over TLS).
struct APNsProxyHarness {
    static let app = "com.example.rides"
    static let topic = "com.example.rides.push-type.liveactivity"
    static let jwt = "bearer eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyMyJ9.eyJpc3MiOiJERUYxMjMifQ.c2lnbmF0dXJl"

    let keyed: ServeProcess.KeyedLedger
    let certificate: String
    let privateKey: String
    let fake: FakeAPNsProcess

    var directory: TemporaryDirectory { keyed.directory }

    /// A ledger with an `ingest,read` key of ``app``, a certificate for 127.0.0.1, and the fake APNs running.
    static func start(prefix: String) async throws -> APNsProxyHarness {
        let keyed = try await ServeProcess.keyedLedger(prefix: prefix, app: app, scope: "ingest,read")
        let certificate = keyed.directory.file("cert.pem"), privateKey = keyed.directory.file("key.pem")
        try await offThePool {
            try Self.tool(
                "/usr/bin/openssl",
                [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                    privateKey, "-out", certificate, "-days", "2", "-subj", "/CN=localhost", "-addext",
                    "subjectAltName=IP:127.0.0.1,DNS:localhost",
                ])
        }
        let fake = try await FakeAPNsProcess.start(
            directory: keyed.directory, certificate: certificate, privateKey: privateKey)
        return APNsProxyHarness(keyed: keyed, certificate: certificate, privateKey: privateKey, fake: fake)
    }

    /// `serve` with the proxy forwarding to the fake; returns it and the proxy's port.
    func serve(name: String = "serve", tls: Bool = false, arguments: [String] = [], log: String? = nil) async throws
        -> (ServeProcess, Int)
    {
        var proxy = ["--apns-proxy-port", "0", "--apns-upstream", "https://127.0.0.1:\(fake.port)", "--apns-ca", certificate]
        if tls { proxy += ["--apns-proxy-cert", certificate, "--apns-proxy-key", privateKey] }
        let server = try await ServeProcess.start(
            keyed.binary, db: keyed.db, directory: directory, name: name, arguments: proxy + arguments, log: log)
        let output = directory.file("\(name).out")
        let marker = tls ? "APNs proxy at https://127.0.0.1:" : "APNs proxy at h2c://127.0.0.1:"
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            if let range = text.range(of: marker), let port = Int(text[range.upperBound...].prefix { $0.isNumber }) {
                return (server, port)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        server.stop()
        throw ServeError(message: "serve did not report the APNs proxy's port")
    }

    /// Imports JSON Lines into the app's namespace with the CLI (before `serve` starts, or beside it).
    func importEvents(_ lines: [String]) async throws {
        let file = directory.file("import-\(UUID().uuidString.prefix(6)).jsonl")
        try lines.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        _ = try await offThePool {
            try ServeProcess.run(keyed.binary, ["import", file, "--app", Self.app, "--db", keyed.db])
        }
    }

    /// A `request` of `activity` a minute ago with push token `token`.
    static func activity(_ activity: String, token: String) -> [String] {
        let at = Int64(Date().timeIntervalSince1970) - 60
        return [
            #"{"stream":"activity:\#(activity)","type":"request","at":\#(at),"data":{"attributesType":"RideAttributes","attributes":{"ride":"\#(activity)"},"content":{"state":{"eta":9}},"pushType":"token"}}"#,
            #"{"stream":"activity:\#(activity)","type":"token","at":\#(at + 1),"data":{"token":"\#(token)"}}"#,
        ]
    }

    /// An `update` push body with a fresh timestamp.
    static func update(eta: Int) -> String {
        #"{"aps":{"timestamp":\#(Int64(Date().timeIntervalSince1970)),"event":"update","content-state":{"eta":\#(eta)}}}"#
    }

    /// The headers a push library sends, plus `x-ledger-key` when `key` is given.
    static func pushHeaders(apnsID: String, key: String?, topic: String = Self.topic) -> [String: String] {
        var headers = [
            "authorization": Self.jwt, "apns-push-type": "liveactivity", "apns-topic": topic, "apns-priority": "10",
            "apns-id": apnsID,
        ]
        if let key { headers["x-ledger-key"] = key }
        return headers
    }

    /// The ledger file, read-only, as another process sees it.
    func openLedger() throws -> Ledger {
        try Ledger(
            path: keyed.db, configuration: .readOnly,
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    /// The event with id `id` once it is in the ledger (polling for at most `limit`), or nil.
    func waitForEvent(_ id: String, limit: Duration = .seconds(15)) async throws -> LoggedEvent? {
        let ledger = try openLedger()
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if let event = try? await ledger.event(id: id, app: Self.app) { return event }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    /// The id the ledger gives the `push` event of an exchange with `apnsID` (as `POST /v1/apns` does).
    static func pushEventID(_ apnsID: String) -> String { DerivedID.uuid("apns:\(apnsID):push") }

    /// A metric's value from `GET /metrics` of `serve` on `port` (0 when it is not printed yet).
    static func metric(_ line: String, port: Int) async throws -> Double {
        let text = try await offThePool {
            try tool("/usr/bin/curl", ["-s", "http://127.0.0.1:\(port)/metrics"])
        }
        for row in text.split(separator: "\n") where row.hasPrefix(line + " ") {
            return Double(row.dropFirst(line.count + 1)) ?? 0
        }
        return 0
    }

    /// Runs a tool to completion; its standard output, or an error naming it when it fails.
    @discardableResult
    static func tool(_ path: String, _ arguments: [String]) throws -> String {
        try ServeProcess.output(of: URL(fileURLWithPath: path), arguments)
    }
}

/// What curl got back.
struct PushReply {
    var status: Int
    var httpVersion: String
    /// Lower-case names.
    var headers: [String: String]
    var body: String
    var took: Duration
}

/// curl as a push library: HTTP/2 with prior knowledge to the cleartext proxy, or HTTP/2 over TLS.
enum PushClient {
    /// - Parameter repeated: headers sent after `headers`, in order, a name possibly more than once.
    static func push(
        port: Int, path: String, headers: [String: String], repeated: [(String, String)] = [], body: String,
        caCertificate: String? = nil, directory: TemporaryDirectory
    ) async throws -> PushReply {
        let name = UUID().uuidString.prefix(8)
        let headerFile = directory.file("h-\(name)"), bodyFile = directory.file("b-\(name)")
        var arguments = ["-s", "-S", "-X", "POST", "-D", headerFile, "-o", bodyFile, "--data-binary", body]
        if let caCertificate {
            arguments += ["--http2", "--cacert", caCertificate]
        } else {
            arguments += ["--http2-prior-knowledge"]
        }
        let sent = headers.sorted(by: { $0.key < $1.key }).map { ($0.key, $0.value) } + repeated
        for (name, value) in sent { arguments += ["-H", "\(name): \(value)"] }
        let scheme = caCertificate == nil ? "http" : "https"
        arguments.append("\(scheme)://127.0.0.1:\(port)\(path)")
        let start = ContinuousClock.now
        try await offThePool { [arguments] in try APNsProxyHarness.tool("/usr/bin/curl", arguments) }
        let took = ContinuousClock.now - start
        let head = try String(contentsOfFile: headerFile, encoding: .utf8)
        var lines = head.split(separator: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        var parsed: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            parsed[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let replyBody = (try? String(contentsOfFile: bodyFile, encoding: .utf8)) ?? ""
        return PushReply(
            status: Int(statusLine[1]) ?? 0, httpVersion: String(statusLine[0]), headers: parsed, body: replyBody,
            took: took)
    }
}

/// `ledger-bench fake-apns` as a child process.
struct FakeAPNsProcess {
    let process: ChildProcess
    let port: Int
    /// One JSON line per request it received.
    let log: String

    /// - Parameters:
    ///   - port: 0 for any free one; a stopped fake's port to start it again there.
    ///   - name: its files' name in `directory` (`<name>.out`, `<name>.jsonl`).
    static func start(
        directory: TemporaryDirectory, certificate: String, privateKey: String, port: Int = 0, name: String = "fake-apns"
    ) async throws -> FakeAPNsProcess {
        guard let bench = CommandRunner("ledger-bench") else {
            throw ServeError(message: "ledger-bench not found next to the test bundle")
        }
        let output = directory.file("\(name).out"), log = directory.file("\(name).jsonl")
        FileManager.default.createFile(atPath: output, contents: nil)
        let process = try ChildProcess(
            bench.executable,
            ["fake-apns", "--port", String(port), "--cert", certificate, "--key", privateKey, "--log", log],
            stdout: .file(output))
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            if let range = text.range(of: "listening on https://127.0.0.1:"),
                let port = Int(text[range.upperBound...].prefix { $0.isNumber })
            {
                return FakeAPNsProcess(process: process, port: port, log: log)
            }
            guard process.isRunning else { throw ServeError(message: "fake-apns exited") }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.terminate()
        throw ServeError(message: "fake-apns did not report its port")
    }

    /// The requests it received so far: path, headers (lower-case names), body, status it answered.
    func received() throws -> [ActivityModel.JSONValue] {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").map { try JSONParser.parse(String($0)) }
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}
