import ArgumentParser
import Foundation
import LedgerTesting

#if canImport(Glibc)
import Glibc
#endif

/// Drives the release `activity-ledger serve` over loopback and reports the server's peak RSS, each figure beside
/// what a user could pick instead, measured in the same run (SPEC §8):
/// - `GET /health` beside a bare Hummingbird GET route (``BareServer``, its own process, same setup);
/// - durable single events beside the bare Hummingbird POST route fed the same bodies (target ≥ 0.8×, p99 ≤ 20 ms);
/// - durable batches of 100 beside `activity-ledger import` of the same events into a new file (target ≥ 1.0×);
/// - the server's peak RSS under the appends and, separately, under a query load (random `state`, `timeline` and
///   `audit` GETs of the activities just appended), each with what of it is the process's own memory (`RssAnon`)
///   and what mapped file pages (`RssFile`) (SPEC §8: `serve` under load ≤ 200 MB).
struct HTTPBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "http",
        abstract: "HTTP append throughput and latency of the real server, beside a bare Hummingbird server and the CLI import.")

    @Option(help: "Events appended in batches.") var events = 100_000
    @Option(help: "Events per batch request.") var batch = 100
    @Option(help: "Events appended one request each.") var singles = 20_000
    @Option(help: "Concurrent connections for batches.") var batchConnections = 16
    @Option(help: "Concurrent connections for single events and /health.") var connections = 64
    @Option(help: "Query GETs (state, timeline, audit of random activities) after the appends.") var queries = 20_000
    @Option(help: "Concurrent connections for the queries.") var queryConnections = 8
    @Option(help: "serve's --reader-map-mib (default: serve's own).") var readerMapMib: Int?
    @Option(help: "full or normal.") var durability = "full"
    @Option(help: "The activity-ledger binary (default: next to ledger-bench).") var server: String?
    @Option(help: "Directory for the benchmark file.") var directory = NSTemporaryDirectory()
    @Flag(name: .customLong("ascending-ids"), help: "Replace the corpus's random event ids by ascending UUIDs.")
    var ascendingIDs = false
    @Flag(name: .customLong("without-ids"), help: "Send the corpus's events without ids: the server gives each one.")
    var withoutIDs = false

    func run() async throws {
        let binary = server ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("activity-ledger").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw ValidationError("no activity-ledger at \(binary); build it with swift build -c release")
        }
        let work = directory + "/bench-http-\(ProcessInfo.processInfo.processIdentifier)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let db = work + "/ledger.sqlite"
        let key = try Self.output(binary, ["keys", "create", "--app", "com.example.bench", "--scope", "ingest", "--db", db])
        let readKey = try Self.output(binary, ["keys", "create", "--app", "com.example.bench", "--scope", "read", "--db", db])
        let (process, port) = try Self.start(
            binary,
            ["serve", "--db", db, "--port", "0", "--durability", durability, "--max-body-bytes", "16777216"]
                + (readerMapMib.map { ["--reader-map-mib", "\($0)"] } ?? []),
            output: work + "/serve.out")
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let bench = URL(fileURLWithPath: CommandLine.arguments[0]).path
        let (bare, barePort) = try Self.start(bench, ["bare-server", "--port", "0"], output: work + "/bare.out")
        defer {
            bare.terminate()
            bare.waitUntilExit()
        }

        var lines = Array(CorpusGenerator(seed: 8, activities: (events + singles) / 25 + 1, eventsPerActivity: 25).lines())
        if ascendingIDs {
            // Every corpus line starts with {"id":"<36 characters>".
            let prefix = "{\"id\":\"".count
            lines = lines.enumerated().map { index, line in
                "{\"id\":\"" + StoreBenchmark.ascendingID(count: index) + line.dropFirst(prefix + 36)
            }
        }
        if withoutIDs {
            // `{"id":"<36 characters>",` goes: the server's own ids (version 7 since session 26).
            let member = "{\"id\":\"".count + 36 + 2
            lines = lines.map { "{" + $0.dropFirst(member) }
        }
        let batches = stride(from: 0, to: events, by: batch).map { start in
            let body = "{\"events\":[" + lines[start..<min(events, start + batch)].joined(separator: ",") + "]}"
            return LoopbackHTTPClient.request("POST", "/v1/batches", key: key, body: Array(body.utf8))
        }
        let singleRequests = lines[events..<(events + singles)].map {
            LoopbackHTTPClient.request("POST", "/v1/events", key: key, body: Array($0.utf8))
        }
        let health = [[UInt8]](repeating: LoopbackHTTPClient.request("GET", "/health", key: nil), count: singles)

        print("activity-ledger serve on 127.0.0.1:\(port), durability \(durability), \(lines[0].utf8.count)-byte first event")
        // Each step also prints the CPU the load generator (this process) and the server used per event: the two
        // share this machine's cores, so what a server reaches here is bounded by what the load generator leaves.
        func step(
            _ name: String, on server: (ChildProcess, Int), _ requests: [[UInt8]], events: Int, connections: Int
        ) throws -> LoadRun {
            let run = try LoadRun.drive(
                port: server.1, requests: requests, connections: connections, server: server.0.processIdentifier)
            print(run.report(name, events: events, connections: connections))
            if let cpu = run.cpuPerEvent(events) { print("  " + cpu) }
            return run
        }
        let ours = (process, port)
        let bareOne = (bare, barePort)
        let bareGet = try step(
            "bare Hummingbird GET", on: bareOne, health, events: health.count, connections: connections)
        let ourHealth = try step("GET /health", on: ours, health, events: health.count, connections: connections)
        let barePost = try step(
            "bare Hummingbird POST", on: bareOne, singleRequests, events: singles, connections: connections)
        let single = try step(
            "POST /v1/events (durable)", on: ours, singleRequests, events: singles, connections: connections)
        let batched = try step(
            "POST /v1/batches ×\(batch)", on: ours, batches, events: events, connections: batchConnections)
        let serverCPU = batched.serverCPU
        let peakRSS = Self.peakRSSMiB(of: process.processIdentifier)
        let appendMemory = Self.memory(of: process.processIdentifier)
        // The query load on its own peak: clear_refs 5 resets the server's VmHWM to what it holds now.
        try? "5".write(toFile: "/proc/\(process.processIdentifier)/clear_refs", atomically: false, encoding: .utf8)
        _ = try step(
            "GET state/timeline/audit", on: ours, Self.queryRequests(lines[0..<events], count: queries, key: readKey),
            events: queries, connections: queryConnections)
        let queryPeakRSS = Self.peakRSSMiB(of: process.processIdentifier)
        let queryMemory = Self.memory(of: process.processIdentifier)
        // The import is timed alone: `serve` seals in the background and goes on sealing the batches' events for
        // seconds after the last answer, and until 2026-11-27 the import was timed beside that (and beside the
        // kernel writing back the server's dirty pages), which slowed the baseline by up to a half in runs of one
        // hour (BENCHMARKS.md, session 24). Both servers are stopped and the disk synced first.
        for server in [process, bare] {
            server.terminate()
            _ = server.waitUntilExit()
        }
        sync()
        let importCPUBefore = Self.childrenCPUSeconds()
        let importSeconds = try Self.timeImport(binary, lines: lines[0..<events], work: work)
        let importCPU = Self.childrenCPUSeconds() - importCPUBefore
        print("activity-ledger import".padding(toLength: 28, withPad: " ", startingAt: 0) + String(
            format: "%6d events, one process:  %9.0f events/s  %.1f s", events, Double(events) / importSeconds,
            importSeconds))
        // CPU per event, whatever the load generator beside the server takes of this machine's cores: what the
        // batches cost the server (while it also seals in the background), beside what the import costs itself.
        print(String(
            format: "CPU per event: the server in batches %.1f µs (sealing beside it included), the import %.1f µs",
            (serverCPU ?? .nan) / Double(events) * 1e6, importCPU / Double(events) * 1e6))
        print(String(
            format: "server peak RSS (VmHWM): appends %.0f MiB (after them %@); queries %.0f MiB (after them %@)",
            peakRSS ?? -1, appendMemory, queryPeakRSS ?? -1, queryMemory))
        print(String(
            format: "GET /health / bare GET %.2fx; durable singles / bare POST %.2fx (target ≥ 0.8x), p99 %.1f ms (target ≤ 20 ms); batches / import %.2fx (target ≥ 1.0x)",
            ourHealth.requestsPerSecond / bareGet.requestsPerSecond, single.requestsPerSecond / barePost.requestsPerSecond,
            single.percentile(0.99), (Double(events) / batched.seconds) / (Double(events) / importSeconds)))
    }

    /// Seconds `activity-ledger import` takes, as a whole process, to import `lines` into a new file.
    static func timeImport(_ binary: String, lines: ArraySlice<String>, work: String) throws -> Double {
        let file = work + "/import.jsonl"
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: file))
        let start = DispatchTime.now().uptimeNanoseconds
        _ = try output(binary, ["import", file, "--db", work + "/import.sqlite"])
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    static func output(_ binary: String, _ arguments: [String]) throws -> String {
        let result = try CommandRunner(executable: URL(fileURLWithPath: binary)).run(arguments)
        guard result.status == 0 else { throw ValidationError("\(arguments.joined(separator: " ")) failed") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Starts a server (`serve`, the bare one, the fake APNs) on a free port and waits for the line, starting with
    /// `marker`, that says where it listens.
    static func start(
        _ binary: String, _ arguments: [String], output out: String, marker: String = "listening on http://127.0.0.1:"
    ) throws -> (ChildProcess, Int) {
        let process = try ChildProcess(
            URL(fileURLWithPath: binary), arguments,
            environment: ProcessInfo.processInfo.environment.merging(["LOG_LEVEL": "warning"]) { $1 },
            stdout: .file(out), stderr: .inherit)
        do {
            let port = try waitForPort(of: process, named: arguments[0], in: out, marker: marker)
            return (process, port)
        } catch {
            process.terminate()
            throw error
        }
    }

    /// The port after `marker` in the output file of `process`, once it is there (up to 20 s); a server may write
    /// the lines of its listeners in any order.
    static func waitForPort(
        of process: ChildProcess, named name: String, in file: String, marker: String
    ) throws -> Int {
        for _ in 0..<400 {
            if let port = try? port(in: file, marker: marker) { return port }
            guard process.isRunning else { throw ValidationError("\(name) exited with \(process.terminationStatus)") }
            usleep(50_000)
        }
        throw ValidationError("\(name) did not report its port")
    }

    /// The port after `marker` in a server's output file.
    static func port(in file: String, marker: String) throws -> Int {
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        guard let range = text.range(of: marker), let port = Int(text[range.upperBound...].prefix { $0.isNumber }) else {
            throw ValidationError("no port in \(file)")
        }
        return port
    }

    /// User + system CPU seconds a running process has used so far (/proc/PID/stat), nil off Linux.
    static func cpuSeconds(of pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        // After the command's closing parenthesis: state is field 3, utime and stime fields 14 and 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// User + system CPU seconds of every child this process has waited for.
    static func childrenCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// `count` GETs cycling through state, timeline and audit, each of an activity drawn (seeded) from the streams
    /// of `lines` (the corpus's streams are `activity:<id>`).
    static func queryRequests(_ lines: ArraySlice<String>, count: Int, key: String) -> [[UInt8]] {
        let marker = "\"stream\":\"activity:"
        var activities = Set<Substring>()
        for line in lines {
            guard let start = line.range(of: marker)?.upperBound, let end = line[start...].firstIndex(of: "\"") else { continue }
            activities.insert(line[start..<end])
        }
        let ids = activities.sorted()
        guard !ids.isEmpty else { return [] }
        var random = SeededRandom(seed: 33)
        let kinds = ["state", "timeline", "audit"]
        return (0..<count).map { index in
            let id = ids[Int(random.next() % UInt64(ids.count))]
            return LoopbackHTTPClient.request("GET", "/v1/activities/\(id)/\(kinds[index % kinds.count])", key: key)
        }
    }

    /// "RSS N MiB: anon A, file F" of a running process (/proc/PID/status).
    static func memory(of pid: Int32) -> String {
        func mib(_ name: String) -> Double { Measure.statusField(name + ":", of: pid) ?? -1 }
        return String(format: "RSS %.0f MiB: anon %.0f, file %.0f", mib("VmRSS"), mib("RssAnon"), mib("RssFile"))
    }

    static func peakRSSMiB(of pid: Int32) -> Double? { Measure.statusField("VmHWM:", of: pid) }
}

/// Sends prepared requests over N keep-alive connections (one thread each, each taking the next request)
/// and records every request's latency.
struct LoadRun {
    var seconds: Double
    /// Milliseconds, sorted.
    var latencies: [Double]
    var failures: Int
    var firstFailure: String?
    /// CPU seconds (user + system) of the load generator (this process) and of the server across the run, when
    /// measured (`drive(…, server:)`).
    var clientCPU: Double?
    var serverCPU: Double?

    /// "CPU per event: load generator … µs, server … µs", when both were measured.
    func cpuPerEvent(_ events: Int) -> String? {
        guard let clientCPU, let serverCPU else { return nil }
        return String(
            format: "CPU per event: load generator %.1f µs, server %.1f µs", clientCPU / Double(events) * 1e6,
            serverCPU / Double(events) * 1e6)
    }

    var requestsPerSecond: Double { Double(latencies.count) / seconds }

    func percentile(_ p: Double) -> Double {
        guard !latencies.isEmpty else { return .nan }
        return latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
    }

    func report(_ name: String, events: Int, connections: Int) -> String {
        var text = name.padding(toLength: 28, withPad: " ", startingAt: 0) + String(
            format: "%6d requests, %3d conns: %9.0f events/s  %8.0f req/s  p50 %6.2f ms  p99 %6.2f ms  %.1f s",
            latencies.count, connections, Double(events) / seconds, Double(latencies.count) / seconds,
            percentile(0.5), percentile(0.99), seconds)
        if failures > 0 { text += "  FAILURES \(failures): \(firstFailure ?? "")" }
        return text
    }

    /// Drives `requests` over `connections`; with `server`, also the CPU that process and this one (the load
    /// generator) used across the run.
    static func drive(port: Int, requests: [[UInt8]], connections: Int, server: Int32? = nil) throws -> LoadRun {
        let shared = Shared(requests: requests)
        let group = DispatchGroup()
        let me = getpid()
        let cpuBefore = (client: HTTPBenchmark.cpuSeconds(of: me), server: server.flatMap(HTTPBenchmark.cpuSeconds))
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<connections {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                shared.work(port: port)
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        var run = shared.result(seconds: seconds)
        func used(_ before: Double?, _ pid: Int32?) -> Double? {
            guard let before, let pid, let after = HTTPBenchmark.cpuSeconds(of: pid) else { return nil }
            return after - before
        }
        run.clientCPU = used(cpuBefore.client, me)
        run.serverCPU = used(cpuBefore.server, server)
        return run
    }

    /// The work queue and results shared by the connection threads.
    private final class Shared: @unchecked Sendable {
        let requests: [[UInt8]]
        private let lock = NSLock()
        private var next = 0
        private var latencies: [Double] = []
        private var failures = 0
        private var firstFailure: String?

        init(requests: [[UInt8]]) {
            self.requests = requests
            latencies.reserveCapacity(requests.count)
        }

        func work(port: Int) {
            let client: LoopbackHTTPClient
            do { client = try LoopbackHTTPClient(port: port) } catch { return fail("\(error)") }
            var mine: [Double] = []
            while let index = take() {
                let started = DispatchTime.now().uptimeNanoseconds
                do {
                    let (status, body) = try client.send(requests[index])
                    if status != 200 { fail("HTTP \(status): \(String(decoding: body.prefix(200), as: UTF8.self))") }
                } catch {
                    return fail("\(error)")
                }
                mine.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
            }
            lock.withLock { latencies += mine }
        }

        private func take() -> Int? {
            lock.withLock {
                guard next < requests.count else { return nil }
                defer { next += 1 }
                return next
            }
        }

        private func fail(_ message: String) {
            lock.withLock {
                failures += 1
                if firstFailure == nil { firstFailure = message }
            }
        }

        func result(seconds: Double) -> LoadRun {
            lock.withLock {
                LoadRun(
                    seconds: seconds, latencies: latencies.sorted(), failures: failures, firstFailure: firstFailure)
            }
        }
    }
}

/// A minimal blocking HTTP/1.1 keep-alive client over one loopback TCP connection, so the load generator
/// costs little next to the server it measures (URLSession's per-request overhead would dominate).
final class LoopbackHTTPClient {
    private let fd: Int32
    private var buffer: [UInt8] = []
    /// Reused for every read: a fresh zeroed 64 KiB array per response cost the client more than the server.
    private var chunk = [UInt8](repeating: 0, count: 65_536)

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init(port: Int) throws {
        fd = try LoopbackSocket.connect(port: port)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    /// A request ready to send: the head and body bytes.
    static func request(_ method: String, _ path: String, key: String?, body: [UInt8]? = nil) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        if let key { head += "Authorization: Bearer \(key)\r\n" }
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + (body ?? [])
    }

    /// Sends one prepared request and reads its response; returns the status and body.
    func send(_ request: [UInt8]) throws -> (status: Int, body: [UInt8]) {
        var sent = 0
        while sent < request.count {
            let n = request.withUnsafeBytes { write(fd, $0.baseAddress! + sent, request.count - sent) }
            guard n > 0 else { throw Failure(description: "write: errno \(errno)") }
            sent += n
        }
        var headEnd: Int? = nil
        while headEnd == nil {
            headEnd = Self.find([13, 10, 13, 10], in: buffer)
            if headEnd == nil { try fill() }
        }
        let head = String(decoding: buffer[..<headEnd!], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "")
        else { throw Failure(description: "bad status line: \(head.prefix(80))") }
        let length = lines.dropFirst().compactMap { line -> Int? in
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
            return Int(parts[1].trimmingCharacters(in: .whitespaces))
        }.first
        guard let length else { throw Failure(description: "response without Content-Length") }
        let bodyStart = headEnd! + 4
        while buffer.count < bodyStart + length { try fill() }
        let body = Array(buffer[bodyStart..<(bodyStart + length)])
        buffer.removeFirst(bodyStart + length)
        return (status, body)
    }

    private func fill() throws {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        guard n > 0 else { throw Failure(description: n == 0 ? "connection closed" : "read: errno \(errno)") }
        buffer.append(contentsOf: chunk[..<n])
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return start }
        }
        return nil
    }
}
