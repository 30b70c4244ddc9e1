import APNsProxy
import ArgumentParser
import Foundation
import LedgerTesting
import NIOCore

/// SPEC §8 "APNs proxy adds ≤ 2 ms p99 to a push, measured against a local fake APNs": the same pushes sent
/// with the same HTTP/2 client (async-http-client, TLS with ALPN h2, one pooled connection) straight to
/// `ledger-bench fake-apns` and through `activity-ledger serve --apns-proxy-port` (TLS) in front of it, which
/// records every push in a durable ledger meanwhile. Latency is one push at a time; throughput is `--concurrency`
/// pushes in flight for `--seconds`.
struct APNsProxyBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns-proxy", abstract: "Added latency (p50/p99) and pushes/s through the APNs proxy vs direct.",
        discussion: "Example: ledger-bench apns-proxy --pushes 5000 --concurrency 32 --seconds 10")

    @Option(help: "Pushes timed one at a time, each way (after 500 to warm up).") var pushes = 5_000
    @Option(help: "Pushes in flight for the throughput run.") var concurrency = 32
    @Option(help: "Seconds of each throughput run.") var seconds = 10.0
    @Option(help: "The activity-ledger binary (default: next to ledger-bench).") var server: String?
    @Option(help: "Directory for the benchmark files.") var directory = NSTemporaryDirectory()
    @Flag(help: """
        Push to a token the ledger does not know, with --apns-proxy-hold 0: the proxy's hop without the appends \
        (each push costs one token lookup, then is counted unattributed), to tell the hop's cost from the recording's.
        """)
    var hopOnly = false

    static let app = "com.example.bench"
    static let known = "a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4"
    static let unknown = "b1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4"

    func run() async throws {
        let binary = server ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("activity-ledger").path
        let work = directory + "/bench-apns-\(ProcessInfo.processInfo.processIdentifier)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (cert, key) = (work + "/cert.pem", work + "/key.pem")
        _ = try HTTPBenchmark.output(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
                "-out", cert, "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
            ])
        let bench = URL(fileURLWithPath: CommandLine.arguments[0]).path
        let (fake, fakePort) = try HTTPBenchmark.start(
            bench, ["fake-apns", "--port", "0", "--cert", cert, "--key", key], output: work + "/fake.out",
            marker: "listening on https://127.0.0.1:")
        defer { Self.stop(fake) }

        let db = work + "/ledger.sqlite"
        let ledgerKey = try HTTPBenchmark.output(
            binary, ["keys", "create", "--app", Self.app, "--scope", "ingest,read", "--db", db])
        let at = Int64(Date().timeIntervalSince1970) - 60
        let events = work + "/activity.jsonl"
        try [
            #"{"stream":"activity:BENCH","type":"request","at":\#(at),"data":{"attributesType":"A","attributes":{},"content":{"state":{"eta":1}},"pushType":"token"}}"#,
            #"{"stream":"activity:BENCH","type":"token","at":\#(at + 1),"data":{"token":"\#(Self.known)"}}"#,
        ].joined(separator: "\n").write(toFile: events, atomically: true, encoding: .utf8)
        _ = try HTTPBenchmark.output(binary, ["import", events, "--app", Self.app, "--db", db])
        let (serve, proxyPort) = try HTTPBenchmark.start(
            binary,
            [
                "serve", "--db", db, "--port", "0", "--apns-proxy-port", "0", "--apns-upstream",
                "https://127.0.0.1:\(fakePort)", "--apns-ca", cert, "--apns-proxy-cert", cert, "--apns-proxy-key", key,
            ] + (hopOnly ? ["--apns-proxy-hold", "0"] : []), output: work + "/serve.out", marker: "APNs proxy at https://127.0.0.1:")
        let token = hopOnly ? Self.unknown : Self.known
        defer { Self.stop(serve) }
        // The two listeners report in either order: the line of the HTTP one may come a moment after the proxy's.
        let httpPort = try HTTPBenchmark.waitForPort(
            of: serve, named: "serve", in: work + "/serve.out", marker: "listening on http://127.0.0.1:")

        let direct = try APNsClient(upstream: try APNsUpstream(parsing: "https://127.0.0.1:\(fakePort)"), extraCA: cert)
        let proxied = try APNsClient(upstream: try APNsUpstream(parsing: "https://127.0.0.1:\(proxyPort)"), extraCA: cert)
        let extra = [("x-ledger-key", ledgerKey)]
        let push: @Sendable (APNsClient, [(String, String)]) async throws -> Int = { client, extra in
            try await Self.push(client, token: token, extra: extra)
        }

        print("fake APNs on 127.0.0.1:\(fakePort), proxy on 127.0.0.1:\(proxyPort) (TLS, h2), \(pushes) pushes one at a time")
        if hopOnly { print("hop only: pushes to a token the ledger does not know, nothing appended") }
        _ = try await Self.latencies(direct, count: 500, extra: [], push: push)
        _ = try await Self.latencies(proxied, count: 500, extra: extra, push: push)
        let directTimes = try await Self.latencies(direct, count: pushes, extra: [], push: push)
        let proxiedTimes = try await Self.latencies(proxied, count: pushes, extra: extra, push: push)
        let (d50, d99) = (Self.percentile(directTimes, 0.50), Self.percentile(directTimes, 0.99))
        let (p50, p99) = (Self.percentile(proxiedTimes, 0.50), Self.percentile(proxiedTimes, 0.99))
        print(String(format: "direct to the fake APNs        p50 %7.3f ms   p99 %7.3f ms", d50, d99))
        print(String(format: "through the proxy              p50 %7.3f ms   p99 %7.3f ms", p50, p99))
        print(String(format: "added by the proxy             p50 %7.3f ms   p99 %7.3f ms   (target: p99 ≤ 2 ms)", p50 - d50, p99 - d99))

        let directRate = try await Self.throughput(direct, concurrency: concurrency, seconds: seconds, extra: [], push: push)
        let proxiedRate = try await Self.throughput(
            proxied, concurrency: concurrency, seconds: seconds, extra: extra, push: push)
        print(String(format: "pushes/s direct                %9.0f /s  (%d in flight, %.0f s)", directRate, concurrency, seconds))
        print(String(format: "pushes/s through the proxy     %9.0f /s  %.2f× direct", proxiedRate, proxiedRate / directRate))
        try await Task.sleep(for: .seconds(2))
        let metrics = try HTTPBenchmark.output("/usr/bin/curl", ["-s", "http://127.0.0.1:\(httpPort)/metrics"])
        for line in metrics.split(separator: "\n") where line.hasPrefix("apns_proxy_record") || line.hasPrefix("apns_proxy_unrecorded_total") {
            print("  \(line)")
        }
        try await direct.shutdown()
        try await proxied.shutdown()
    }

    static func push(_ client: APNsClient, token: String, extra: [(String, String)]) async throws -> Int {
        let body = #"{"aps":{"timestamp":\#(Int64(Date().timeIntervalSince1970)),"event":"update","content-state":{"eta":3}}}"#
        let headers: [(name: String, value: String)] =
            [
                ("authorization", "bearer bench.jwt.token"), ("apns-push-type", "liveactivity"),
                ("apns-topic", app + ".push-type.liveactivity"), ("apns-priority", "10"),
                ("apns-id", UUID().uuidString),
            ] + extra.map { (name: $0.0, value: $0.1) }
        return try await client.send(APNsOutgoing(path: "/3/device/\(token)", headers: headers, body: ByteBuffer(string: body))).status
    }

    /// Milliseconds of each of `count` pushes sent one after the other.
    static func latencies(
        _ client: APNsClient, count: Int, extra: [(String, String)],
        push: @Sendable (APNsClient, [(String, String)]) async throws -> Int
    ) async throws -> [Double] {
        var times: [Double] = []
        times.reserveCapacity(count)
        for _ in 0..<count {
            let start = DispatchTime.now().uptimeNanoseconds
            let status = try await push(client, extra)
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            guard status == 200 else { throw ValidationError("a push was answered \(status)") }
        }
        return times
    }

    /// Pushes per second with `concurrency` in flight for `seconds`.
    static func throughput(
        _ client: APNsClient, concurrency: Int, seconds: Double, extra: [(String, String)],
        push: @escaping @Sendable (APNsClient, [(String, String)]) async throws -> Int
    ) async throws -> Double {
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        let start = DispatchTime.now().uptimeNanoseconds
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    var done = 0
                    while DispatchTime.now().uptimeNanoseconds < end {
                        _ = try await push(client, extra)
                        done += 1
                    }
                    return done
                }
            }
            return try await group.reduce(0, +)
        }
        return Double(total) / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
    }

    static func stop(_ process: ChildProcess) {
        process.terminate()
        process.waitUntilExit()
    }
}
