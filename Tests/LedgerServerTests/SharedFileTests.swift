import Foundation
import HTTPTypes
import HummingbirdTesting
import Ledger
import LedgerServer
import LedgerStore
import LedgerTesting
import Logging
import NIOCore
import Testing

/// One ledger file used by several processes at once, as in production: the service (twice), on-call readers,
/// an import, a rebuild, a backup. Real binary, real files.
@Suite("Shared ledger files (real binary, several processes)")
struct SharedFileTests {
    static let readCommands: [[String]] = [
        ["state", "R1"], ["audit", "R1", "--json"], ["timeline", "R1"], ["activities"], ["export"], ["verify"],
        ["digest"], ["stats", "--json"],
    ]
    static let ride = """
        {"id":"10000000-0000-4000-8000-000000000001","stream":"activity:R1","type":"request","at":"2026-11-20T21:00:00Z","data":{"attributesType":"RideAttributes","attributes":{"ride":"R1"},"content":{"state":{"eta":5}},"pushType":"token","installation":"I1"}}
        {"id":"10000000-0000-4000-8000-000000000003","stream":"activity:R1","type":"update","at":"2026-11-20T21:05:00Z","data":{"content":{"state":{"eta":3}},"timestamp":1795208700}}
        """
    static let patience = ["--busy-timeout", "30"]

    @Test("two servers under append load, CLI readers of every read command, an import, a rebuild and a live backup: nothing fails, nothing acknowledged is lost, both files verify")
    func severalProcessesAtOnce() async throws {
        let binary = try #require(ServeProcess.binary(), "activity-ledger not found next to the test bundle")
        let runner = try #require(CommandRunner("activity-ledger"))
        let directory = TemporaryDirectory(prefix: "shared-file")
        let db = directory.file("ledger.sqlite")
        let backup = directory.file("backup.sqlite")
        let key = try await offThePool { () throws -> String in
            let imported = try runner.run(["import", "-", "--db", db], input: Self.ride)
            guard imported.status == 0 else { throw ServeError(message: imported.stderr) }
            return try ServeProcess.run(binary, ["keys", "create", "--app", "com.example.shared", "--scope", "ingest", "--db", db])
        }
        let first = try await ServeProcess.start(binary, db: db, directory: directory, name: "serve-a", arguments: Self.patience)
        let second = try await ServeProcess.start(binary, db: db, directory: directory, name: "serve-b", arguments: Self.patience)
        let log = SoakLog()
        let deadline = ContinuousClock.now + .seconds(20)
        // The appenders go on past the readers' 20 s until 60 events are acknowledged (at most 120 s): on a
        // 2-core machine running the other HTTP suites beside this one, 20 s gave 16.
        let appenders = (0..<4).map { worker in
            Task {
                await Self.append(
                    port: worker == 3 ? second.port : first.port, key: key, worker: worker,
                    until: deadline + .seconds(100), log: log)
            }
        }
        let readers = (0..<4).map { reader in
            Task { try await offThePool { Self.read(runner, db: db, offset: reader * 2, until: deadline) } }
        }
        let writers = Task {
            try await offThePool { () -> [String: CommandRunner.Result] in
                Thread.sleep(forTimeInterval: 2)
                let lines = (0..<2000).map { Sample.request("IMP-\($0)") }.joined(separator: "\n")
                var results: [String: CommandRunner.Result] = [:]
                results["import"] = try runner.run(["import", "-", "--db", db] + Self.patience, input: lines)
                results["backup"] = try runner.run(["backup", "--db", db, "--into", backup] + Self.patience)
                results["rebuild"] = try runner.run(["rebuild", "--db", db] + Self.patience)
                return results
            }
        }
        while ContinuousClock.now < deadline + .seconds(100) {
            let enough = await log.acknowledged.count >= 60
            if enough, ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        await log.finish()
        for appender in appenders { await appender.value }
        var reads = 0
        var readFailures: [String] = []
        for reader in readers {
            let (count, failures) = try await reader.value
            reads += count
            readFailures += failures
        }
        let written = try await writers.value
        let stops = try await offThePool { [first.terminate(within: .seconds(30)), second.terminate(within: .seconds(30))] }

        let acked = await log.acknowledged
        let failures = await log.failures
        #expect(failures.isEmpty, "appends failed: \(failures.count), first: \(failures.prefix(3))")
        #expect(readFailures.isEmpty, "read commands failed: \(readFailures.count), first: \(readFailures.prefix(3))")
        for (name, result) in written.sorted(by: { $0.key < $1.key }) {
            #expect(result.status == 0, "\(name): \(result.stderr)")
        }
        #expect(reads >= 8, "the readers ran too few commands (\(reads)) to test anything")
        #expect(acked.count >= 60, "the servers acknowledged too little (\(acked.count)) to test anything")
        for stop in stops {
            #expect(stop?.status == 0, "serve did not exit 0 after SIGTERM: \(String(describing: stop))")
        }

        let ledger = try Ledger(path: db, configuration: .readOnly, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        let missing = await missingAcknowledged(acked, in: ledger, app: "com.example.shared")
        #expect(missing.isEmpty, "acknowledged events missing or moved: \(missing.prefix(5))")
        let checks = try await offThePool { () -> [CommandRunner.Result] in
            let copy = try runner.run(["digest", "--db", backup]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            return [
                try runner.run(["verify", "--db", db]), try runner.run(["verify", "--db", backup]),
                // The copy's last hash is the source's at that position: the source's log up to there is the copy's.
                try runner.run(["verify", "--db", db, "--digest", copy]),
                try runner.run(["state", "IMP-1999", "--db", db, "--json"]),
            ]
        }
        for check in checks.prefix(3) { #expect(check.status == 0, "\(check.stdout) \(check.stderr)") }
        #expect(checks[3].status == 0, "the import's last activity is missing: \(checks[3].stderr)")
        print("shared file: \(acked.count) events acknowledged, \(reads) read commands")
    }

    @Test("an append waits for another process's write lock within the busy timeout, and past it answers 503 with Retry-After, never 500")
    func busyWriteLock() async throws {
        let keyed = try await ServeProcess.keyedLedger(prefix: "shared-busy", app: "com.example.busy")
        let (binary, directory, db, key) = (keyed.binary, keyed.directory, keyed.db, keyed.key)
        let server = try await ServeProcess.start(binary, db: db, directory: directory, arguments: ["--busy-timeout", "2"])
        let client = TestClient(host: "127.0.0.1", port: server.port, configuration: .init(timeout: .seconds(30)))
        client.connect()
        let headers: HTTPFields = [.authorization: "Bearer \(key)", .contentType: "application/json"]
        func append(_ activity: String) async throws -> TestClient.Response {
            let id = "30000000-0000-4000-8000-\(String(repeating: "0", count: 12 - activity.count))\(activity.utf8.map { String($0 % 10) }.joined())"
            return try await client.post(
                "/v1/events", headers: headers, body: ByteBuffer(string: Sample.request(activity, id: id)))
        }
        #expect(try await append("B0").status == .ok)

        let short = try await offThePool { try WriteLockHolder(path: db, seconds: 0.8) }
        let waited = try await append("B1")
        #expect(waited.status == .ok, "an append did not wait 0.8 s for a lock: \(Self.text(waited))")
        try await offThePool { short.waitUntilReleased() }

        // Held until the refusal is in: a 6 s hold ended before the append reached the server in a fresh-clone
        // CI run (the test's own awaits wait for a cooperative pool the other suites keep busy).
        let long = try await offThePool { try WriteLockHolder(path: db, seconds: 120) }
        let refused = try await append("B2")
        long.release()
        #expect(refused.status == .serviceUnavailable, "\(refused.status) \(Self.text(refused))")
        #expect(refused.headers[.retryAfter] != nil)
        #expect(Self.text(refused).contains(#""code":"unavailable""#))
        try await offThePool { long.waitUntilReleased() }
        let retried = try await append("B2")
        #expect(retried.status == .ok)
        // Same event id: had the refused append been written, the retry would be a duplicate.
        #expect(Self.text(retried).contains(#""duplicate":false"#), "the refused append was written: \(Self.text(retried))")

        try await client.shutdown()
        let stop = try await offThePool { server.terminate(within: .seconds(20)) }
        #expect(stop?.status == 0)
    }

    @Test("SIGTERM under append load: every acknowledged append is durable, none is answered 500, exit 0 within the grace period")
    func drainsOnSigterm() async throws {
        let keyed = try await ServeProcess.keyedLedger(prefix: "shared-drain", app: "com.example.drain")
        let (binary, directory, db, key) = (keyed.binary, keyed.directory, keyed.db, keyed.key)
        let server = try await ServeProcess.start(binary, db: db, directory: directory)
        let log = SoakLog()
        let deadline = ContinuousClock.now + .seconds(60)
        let appenders = (0..<6).map { worker in
            Task { await Self.append(port: server.port, key: key, worker: worker, until: deadline, log: log, stopOnError: true) }
        }
        // SIGTERM once 150 events are acknowledged, or after 15 s with more than 20 (the least that tests
        // anything; a 2-core machine running the other HTTP suites beside this one gave 24 in 15 s).
        let patience = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            let acknowledged = await log.acknowledged.count
            if acknowledged >= 150 || (acknowledged > 20 && ContinuousClock.now >= patience) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .milliseconds(Int.random(in: 0...300)))
        let stop = try await offThePool { server.terminate(within: .seconds(20)) }
        for appender in appenders { await appender.value }

        #expect(stop != nil, "serve did not exit within 20 s of SIGTERM")
        #expect(stop?.status == 0, "serve exited \(String(describing: stop?.status)) after SIGTERM")
        let acked = await log.acknowledged
        #expect(acked.count > 20, "the server acknowledged too little to test anything")
        let answers = await log.failures.filter { !$0.hasPrefix("transport") }
        #expect(answers.allSatisfy { $0.hasPrefix("503") }, "in-flight appends answered other than 200/503: \(answers.prefix(3))")
        let ledger = try Ledger(path: db, configuration: .readOnly, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        let missing = await missingAcknowledged(acked, in: ledger, app: "com.example.drain")
        #expect(missing.isEmpty, "acknowledged events missing or moved: \(missing.prefix(5))")
        let report = try await offThePool { try ledger.store.verify() }
        #expect(report.ok, "\(report.reason ?? "")")
        print("drain: \(acked.count) events acknowledged, \(answers.count) refused, exit after \(String(describing: stop?.took))")
    }

    /// Appends batches (a request and an update of a new activity) until `deadline` or `log.finish()`, recording every answer.
    static func append(
        port: Int, key: String, worker: Int, until deadline: ContinuousClock.Instant, log: SoakLog,
        stopOnError: Bool = false
    ) async {
        let client = TestClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(60)))
        client.connect()
        defer { Task { try? await client.shutdown() } }
        let headers: HTTPFields = [.authorization: "Bearer \(key)", .contentType: "application/json"]
        var round = 0
        while ContinuousClock.now < deadline, await !log.finished {
            round += 1
            let activity = "W\(worker)-\(round)"
            let ids = (0..<2).map { _ in UUID().uuidString.lowercased() }
            let body = #"{"events":[\#(Sample.request(activity, id: ids[0])),\#(Sample.update(activity, id: ids[1]))]}"#
            let response: TestClient.Response
            do {
                response = try await client.post("/v1/batches", headers: headers, body: ByteBuffer(string: body))
            } catch {
                await log.fail("transport: \(error)")
                if stopOnError { return }
                continue
            }
            guard response.status == .ok else {
                await log.fail("\(response.status.code) \(Self.text(response))")
                if stopOnError { return }
                continue
            }
            guard let json = try? JSONValue(json: Data(Self.text(response).utf8)),
                let results = json["results"]?.arrayValue, results.count == 2
            else {
                await log.fail("200 without results: \(Self.text(response))")
                continue
            }
            var landed: [String: Int64] = [:]
            for (id, result) in zip(ids, results) {
                if let position = result["position"]?.intValue { landed[id] = Int64(position) }
            }
            await log.add(landed)
        }
    }

    static func text(_ response: TestClient.Response) -> String { String(buffer: response.body ?? ByteBuffer()) }

    /// Runs the read commands in turn until `deadline`; returns how many ran and the failures.
    static func read(_ runner: CommandRunner, db: String, offset: Int, until deadline: ContinuousClock.Instant)
        -> (Int, [String])
    {
        var failures: [String] = []
        var count = 0
        while ContinuousClock.now < deadline, count < 400 {
            let command = readCommands[(count + offset) % readCommands.count]
            count += 1
            do {
                let result = try runner.run(command + ["--db", db])
                if result.status != 0 {
                    failures.append("\(command.joined(separator: " ")) exited \(result.status): \(result.stderr)")
                }
            } catch {
                failures.append("\(command.joined(separator: " ")): \(error)")
            }
        }
        return (count, failures)
    }
}

/// What the appenders saw: acknowledged event id → position, and every answer other than 200.
actor SoakLog {
    private(set) var acknowledged: [String: Int64] = [:]
    private(set) var failures: [String] = []
    /// Set when the test has seen enough: appenders stop before their next request.
    private(set) var finished = false

    func finish() { finished = true }

    func add(_ landed: [String: Int64]) { acknowledged.merge(landed) { first, _ in first } }
    func fail(_ reason: String) { failures.append(reason) }
}
