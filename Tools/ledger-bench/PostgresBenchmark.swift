import ActivityModel
import ArgumentParser
import Foundation
import Ledger
import LedgerPostgres
import LedgerStore
import LedgerTesting
import Logging
import NIOSSL
import PostgresNIO

/// SPEC §8 "PostgreSQL backend, batches of 100 ≥ 0.5× a plain PostgreSQL insert of the raw JSON lines (same
/// server, same run)": `PostgresEventLog.append` beside plain inserts of the same corpus's JSON lines, each on a
/// database of its own on one server, durable (`synchronous_commit = on`), one transaction per batch.
///
/// The baseline is what a user without the ledger would write: one client connection, each batch one
/// transaction of one `INSERT … SELECT * FROM unnest($1::text[])` (the same multi-row insert the log uses), into
///   - `raw_events(position bigserial PRIMARY KEY, line text NOT NULL)`: the plain table of the lines, the SPEC's
///     baseline (the faster one, so the stricter ratio);
///   - the same with `stream text NOT NULL` and an index on it: the realistic user's table (reading one
///     activity's events needs it); printed beside for its cost, not used for the target.
/// Ours stores the same line as each event's payload, with the log's id, stream, version, type, times and chain
/// hash, and its two unique indexes (id; stream + version).
///
/// Without `--url` it starts a throwaway cluster with Tools/pg-cluster.sh and stops it at the end (also on
/// failure or Ctrl-C). With `--url` it creates its databases (`bench_<pid>_…`) on that server and drops them.
struct PostgresBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "postgres",
        abstract: "PostgreSQL backend appends in batches vs plain PostgreSQL inserts of the raw JSON lines.",
        discussion: "Example: ledger-bench postgres --events 200000 (starts and stops a throwaway cluster)")

    @Option(help: "A PostgreSQL URL (postgresql://user@host:port/db) whose server the bench creates and drops its databases on; without it a throwaway cluster is started with Tools/pg-cluster.sh.")
    var url: String?
    @Option(help: "Events in the corpus.") var events = 200_000
    @Option(help: "Events per append batch (one durable transaction each).") var batch = 100
    @Option(help: "Events per activity stream.") var perActivity = 25
    @Option(help: "Corpus seed.") var seed: UInt64 = 2026

    func run() async throws {
        guard events >= 1 else { throw BenchFailure("--events must be at least 1, got \(events)") }
        guard (1...10_000).contains(batch) else { throw BenchFailure("--batch must be 1…10000, got \(batch)") }
        guard perActivity >= 1 else { throw BenchFailure("--per-activity must be at least 1, got \(perActivity)") }
        if let url {
            do { _ = try PostgresURL(url) } catch let error as StoreError {
                throw BenchFailure("--url: " + error.message.replacingOccurrences(of: "--db: ", with: ""))
            }
            try await measure(on: url, note: "given by --url")
        } else {
            let cluster = try ThrowawayCluster.start()
            do {
                try await measure(on: cluster.url, note: "throwaway cluster in \(cluster.directory)")
            } catch {
                cluster.stop()
                throw error
            }
            cluster.stop()
        }
    }

    private func measure(on serverURL: String, note: String) async throws {
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let server = try BenchServer(url: serverURL, logger: logger)
        let corpus = CorpusGenerator(seed: seed, activities: max(1, events / perActivity), eventsPerActivity: perActivity)
        var appendBatches: [AppendBatch] = []
        var lineBatches: [[String]] = []
        var streamBatches: [[String]] = []
        var pending: [NewEvent] = []
        var lineBytes = 0
        for generated in corpus {
            let line = generated.line
            lineBytes += line.utf8.count
            pending.append(NewEvent(
                id: generated.id, stream: generated.stream, type: generated.type, at: generated.at,
                recordedAt: generated.at + 40, payload: Array(line.utf8)))
            if pending.count == batch {
                appendBatches.append(AppendBatch(events: pending))
                pending.removeAll(keepingCapacity: true)
            }
        }
        if !pending.isEmpty { appendBatches.append(AppendBatch(events: pending)) }
        for appendBatch in appendBatches {
            lineBatches.append(appendBatch.events.map { String(decoding: $0.payload, as: UTF8.self) })
            streamBatches.append(appendBatch.events.map(\.stream))
        }
        let count = corpus.count
        print("corpus: \(count) events, \(corpus.activities) activities, seed \(seed), batches of \(batch), payload = the JSON line (\(String(format: "%.1f", Double(lineBytes) / Double(count))) bytes on average)")

        let tag = "bench_\(ProcessInfo.processInfo.processIdentifier)"
        let names = ["raw", "raw_stream", "ours", "two", "ledger", "ledger_two"].map { "\(tag)_\($0)" }
        do {
            let settings = try await server.settings()
            print("server: \(settings) (\(note))")
            for name in names { try await server.recreate(name) }

            // a. The baselines, one connection, a transaction per batch.
            let plain = try await server.rawInserts(
                database: names[0], lines: lineBatches, streams: nil)
            let withStream = try await server.rawInserts(
                database: names[1], lines: lineBatches, streams: streamBatches)

            // b. Ours, one appender at a time.
            try await server.checkpoint()
            let ours = try await PostgresEventLog(url: server.url(names[2]), maximumConnections: 2, logger: logger)
            var oursSamples: [Double] = []
            oursSamples.reserveCapacity(appendBatches.count)
            let oursSeconds: Double
            do {
                oursSeconds = try await Measure.seconds {
                    for appendBatch in appendBatches {
                        let start = DispatchTime.now().uptimeNanoseconds
                        _ = try await ours.append(appendBatch)
                        oursSamples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
                    }
                }
                guard try await ours.lastPosition() == Int64(count) else {
                    throw BenchFailure("benchmark self-check failed: the log does not end at position \(count)")
                }
            } catch {
                await ours.close()
                throw error
            }
            await ours.close()

            // c. Two appenders, two pools (as two servers would have), on one database.
            try await server.checkpoint()
            let first = try await PostgresEventLog(url: server.url(names[3]), maximumConnections: 2, logger: logger)
            let second = try await PostgresEventLog(url: server.url(names[3]), maximumConnections: 2, logger: logger)
            var report = VerifyReport(ok: false, checked: 0, lastGood: Digest(position: 0, hash: []))
            let twoSeconds: Double
            let verifySeconds: Double
            do {
                twoSeconds = try await Measure.seconds {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for (index, log) in [first, second].enumerated() {
                            let share = appendBatches.enumerated().filter { $0.offset % 2 == index }.map(\.element)
                            group.addTask {
                                for appendBatch in share { _ = try await log.append(appendBatch) }
                            }
                        }
                        try await group.waitForAll()
                    }
                }
                verifySeconds = try await Measure.seconds { report = try await first.verify(upTo: nil) }
            } catch {
                await first.close()
                await second.close()
                throw error
            }
            await first.close()
            await second.close()
            guard report.ok, report.checked == Int64(count) else {
                throw BenchFailure(
                    "verify after two appenders failed at position \(report.firstBadPosition ?? -1): \(report.reason ?? "checked \(report.checked) of \(count)")")
            }

            // e. The ledger itself (`Ledger.append`: the domain decoder's events, projections in the same
            //    transaction), one ledger; f. two ledgers (two pools, as two servers) on one database;
            //    g. `state --at` on the database beside the same question of a file with the same events.
            let ledgerBatches = try lineBatches.map { lines in try lines.map { try EventCodec.decode($0) } }
            try await server.checkpoint()
            let ledger = try await Ledger.open(.postgres(url: server.url(names[4])), logger: logger)
            var ledgerSamples: [Double] = []
            let ledgerSeconds: Double
            let stateOnDatabase: [Double]
            let stateOnFile: [Double]
            let directory = TemporaryDirectory(prefix: "bench-postgres-state")
            do {
                ledgerSeconds = try await Measure.seconds {
                    for events in ledgerBatches {
                        let start = DispatchTime.now().uptimeNanoseconds
                        // As the HTTP append routes do: events just decoded from their JSON are not decoded again.
                        _ = try await ledger.append(decoded: events)
                        ledgerSamples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
                    }
                }
                var configuration = LedgerConfiguration()
                configuration.store.durability = .normal
                let file = try Ledger(path: directory.file("ledger.sqlite"), configuration: configuration, logger: logger)
                for events in ledgerBatches { _ = try await file.append(events) }
                let questions = Self.stateQuestions(corpus, count: 2_000)
                stateOnDatabase = try await Self.stateLatencies(ledger, questions)
                stateOnFile = try await Self.stateLatencies(file, questions)
            } catch {
                await ledger.close()
                throw error
            }
            await ledger.close()
            try await server.checkpoint()
            let pair = [
                try await Ledger.open(.postgres(url: server.url(names[5])), logger: logger),
                try await Ledger.open(.postgres(url: server.url(names[5])), logger: logger),
            ]
            let twoLedgerSeconds: Double
            do {
                twoLedgerSeconds = try await Measure.seconds {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for (index, one) in pair.enumerated() {
                            let share = ledgerBatches.enumerated().filter { $0.offset % 2 == index }.map(\.element)
                            group.addTask { for events in share { _ = try await one.append(decoded: events) } }
                        }
                        try await group.waitForAll()
                    }
                }
                let verified = try await pair[0].verify()
                guard verified.ok, verified.checked == Int64(count) else {
                    throw BenchFailure("verify after two ledgers failed: \(verified.reason ?? "checked \(verified.checked)")")
                }
            } catch {
                for one in pair { await one.close() }
                throw error
            }
            for one in pair { await one.close() }

            print("")
            Self.row("plain INSERT of the lines (baseline a)", count, plain.seconds, baseline: plain.seconds,
                     note: "raw_events(position bigserial PK, line text)")
            Self.row("  same + stream column and index", count, withStream.seconds, baseline: plain.seconds,
                     note: "a realistic user's table; not the target's baseline")
            Self.row("PostgresEventLog.append ×\(batch) (b)", count, oursSeconds, baseline: plain.seconds,
                     note: "SPEC target ≥ 0.5×")
            Self.row("  beside the stream-indexed baseline", count, oursSeconds, baseline: withStream.seconds,
                     note: "information")
            let oursLatency = Self.percentiles(oursSamples)
            let plainLatency = Self.percentiles(plain.samples)
            print(String(
                format: "%@ p50 %6.2f ms p99 %6.2f ms   baseline p50 %6.2f ms p99 %6.2f ms   (d; baseline a)",
                Self.pad("  one batch of \(batch), latency") as NSString, oursLatency.p50, oursLatency.p99, plainLatency.p50,
                plainLatency.p99))
            Self.row("two appenders, two pools, one database (c)", count, twoSeconds, baseline: oursSeconds,
                     note: "baseline: one appender (b)")
            print(String(
                format: "%@ ok, %lld events checked in %.2f s (%.0f /s)", Self.pad("  verify after two appenders") as NSString,
                report.checked, verifySeconds, Double(report.checked) / verifySeconds))
            Self.row("Ledger.append ×\(batch), projections (e)", count, ledgerSeconds, baseline: plain.seconds,
                     note: "the ledger on PostgreSQL: decoded events, projection rows in the append's write statement")
            let ledgerLatency = Self.percentiles(ledgerSamples)
            print(String(
                format: "%@ p50 %6.2f ms p99 %6.2f ms", Self.pad("  one batch of \(batch), latency") as NSString,
                ledgerLatency.p50, ledgerLatency.p99))
            Self.row("two ledgers (two servers' pools), one database (f)", count, twoLedgerSeconds, baseline: ledgerSeconds,
                     note: "baseline: one ledger (e)")
            let database = Self.percentiles(stateOnDatabase)
            let embedded = Self.percentiles(stateOnFile)
            print(String(
                format: "%@ p50 %6.2f ms p99 %6.2f ms   file p50 %6.2f ms p99 %6.2f ms   (%d questions; baseline: the same ledger in a file)",
                Self.pad("state --at on PostgreSQL (g)") as NSString, database.p50, database.p99, embedded.p50, embedded.p99,
                stateOnDatabase.count))
            let ratio = plain.seconds / oursSeconds
            print(String(
                format: "SPEC §8: PostgreSQL backend (the log), batches of %d / plain PostgreSQL insert of the raw JSON lines = %.2fx (target ≥ 0.5x): %@",
                batch, ratio, (ratio >= 0.5 ? "met" : "NOT met") as NSString))
            let ledgerRatio = plain.seconds / ledgerSeconds
            print(String(
                format: "SPEC §8: PostgreSQL backend (the ledger, with projections), batches of %d / plain insert = %.2fx (target ≥ 0.5x): %@",
                batch, ledgerRatio, (ledgerRatio >= 0.5 ? "met" : "NOT met") as NSString))
        } catch {
            for name in names { try? await server.drop(name) }
            throw error
        }
        for name in names { try await server.drop(name) }
    }

    static func row(_ name: String, _ count: Int, _ seconds: Double, baseline: Double, note: String) {
        print(String(
            format: "%@ %10.0f /s   baseline %10.0f /s   ratio %.2f   (%@)", Self.pad(name) as NSString,
            Double(count) / seconds, Double(count) / baseline, baseline / seconds, note as NSString))
    }

    /// (activity, time) pairs spread over the corpus: each activity's life from before its first event to after
    /// its last.
    static func stateQuestions(_ corpus: CorpusGenerator, count: Int) -> [(String, Instant)] {
        var picks: [(String, Instant)] = []
        var seen: [String: (Int64, Int64)] = [:]
        for event in corpus where event.stream.hasPrefix("activity:") {
            let id = String(event.stream.dropFirst("activity:".count))
            let (low, high) = seen[id] ?? (event.at, event.at)
            seen[id] = (min(low, event.at), max(high, event.at))
        }
        let ids = seen.keys.sorted()
        guard !ids.isEmpty else { return [] }
        for index in 0..<count {
            let id = ids[(index * 7919) % ids.count]
            let (low, high) = seen[id]!
            let span = max(1, high - low + 600_000)
            picks.append((id, Instant(milliseconds: low - 60_000 + Int64((index * 104_729) % Int(span)))))
        }
        return picks
    }

    /// Milliseconds each `state(activity:at:)` took, asked one after another.
    static func stateLatencies(_ ledger: Ledger, _ questions: [(String, Instant)]) async throws -> [Double] {
        var samples: [Double] = []
        samples.reserveCapacity(questions.count)
        for (activity, at) in questions {
            let start = DispatchTime.now().uptimeNanoseconds
            _ = try? await ledger.state(activity: activity, at: at)
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        return samples
    }

    /// `%-46@` does not pad on Linux.
    static func pad(_ name: String) -> String { name.padding(toLength: max(46, name.count), withPad: " ", startingAt: 0) }

    static func percentiles(_ samples: [Double]) -> (p50: Double, p99: Double) {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return (0, 0) }
        return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, sorted.count * 99 / 100)])
    }
}

/// The server the bench measures on: databases of its own made and dropped through the URL's database.
struct BenchServer: Sendable {
    let base: PostgresURL
    let logger: Logger

    init(url: String, logger: Logger) throws {
        base = try PostgresURL(url)
        self.logger = logger
    }

    /// The URL of database `name` on the same server, as `PostgresEventLog` takes it.
    func url(_ name: String) -> String { base.with(database: name).text }

    /// Runs `body` with a client of one connection on `database` (the URL's own by default).
    func withClient<T: Sendable>(
        database: String? = nil, _ body: @Sendable (PostgresClient) async throws -> T
    ) async throws -> T {
        try await base.with(database: database ?? base.database).withClient(logger: logger, body)
    }

    func settings() async throws -> String {
        try await withClient { client in
            var values: [String] = []
            for name in ["server_version", "synchronous_commit", "fsync", "wal_sync_method", "shared_buffers"] {
                let value = try await client.query(PostgresQuery(unsafeSQL: "SHOW \(name)")).collect().first?
                    .decode(String.self) ?? "?"
                values.append("\(name)=\(value)")
            }
            return "PostgreSQL " + values.joined(separator: ", ")
        }
    }

    func recreate(_ name: String) async throws {
        try await withClient { client in
            _ = try await client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"))
            _ = try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        }
    }

    func drop(_ name: String) async throws {
        try await withClient { client in
            _ = try await client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"))
        }
    }

    /// Writes dirty pages out before a timed run, so that it does not pay for the previous run's.
    func checkpoint() async throws {
        try await withClient { client in _ = try await client.query("CHECKPOINT") }
    }

    /// The baseline: each batch of lines one transaction of one unnest insert, on one connection.
    func rawInserts(database: String, lines: [[String]], streams: [[String]]?) async throws
        -> (seconds: Double, samples: [Double])
    {
        try await checkpoint()
        let logger = self.logger
        return try await withClient(database: database) { client in
            if streams == nil {
                try await client.query(
                    "CREATE TABLE raw_events (position bigserial PRIMARY KEY, line text NOT NULL)", logger: logger)
            } else {
                try await client.query(
                    "CREATE TABLE raw_events (position bigserial PRIMARY KEY, stream text NOT NULL, line text NOT NULL)",
                    logger: logger)
                try await client.query("CREATE INDEX raw_events_by_stream ON raw_events (stream)", logger: logger)
            }
            try await client.query("SET synchronous_commit = on", logger: logger)
            var samples: [Double] = []
            samples.reserveCapacity(lines.count)
            let seconds = try await Measure.seconds {
                for (index, batch) in lines.enumerated() {
                    let start = DispatchTime.now().uptimeNanoseconds
                    try await client.withTransaction(logger: logger) { connection in
                        if let streams {
                            _ = try await connection.query(
                                "INSERT INTO raw_events (stream, line) SELECT * FROM unnest(\(streams[index])::text[], \(batch)::text[])",
                                logger: logger)
                        } else {
                            _ = try await connection.query(
                                "INSERT INTO raw_events (line) SELECT * FROM unnest(\(batch)::text[])", logger: logger)
                        }
                    }
                    samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
                }
            }
            let stored = try await client.query("SELECT count(*) FROM raw_events", logger: logger).collect().first?
                .decode(Int64.self) ?? 0
            guard stored == Int64(lines.reduce(0) { $0 + $1.count }) else {
                throw BenchFailure("benchmark self-check failed: raw_events holds \(stored) rows")
            }
            return (seconds, samples)
        }
    }
}

/// A cluster of Tools/pg-cluster.sh in a folder of our own, stopped (and its folder deleted) by `stop`, also
/// on Ctrl-C or SIGTERM.
final class ThrowawayCluster {
    let script: String
    let directory: String
    let url: String
    private let signals: [any DispatchSourceSignal]

    private init(script: String, directory: String, url: String, signals: [any DispatchSourceSignal]) {
        self.script = script
        self.directory = directory
        self.url = url
        self.signals = signals
    }

    /// Tools/pg-cluster.sh in the current directory or one above it, else above the executable.
    static func locateScript() -> String? {
        let fileManager = FileManager.default
        var starts = [URL(fileURLWithPath: fileManager.currentDirectoryPath)]
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        starts.append(executable.deletingLastPathComponent())
        if let resolved = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            starts.append(resolved.deletingLastPathComponent())
        }
        for start in starts {
            var folder = start.standardizedFileURL
            while true {
                let candidate = folder.appendingPathComponent("Tools/pg-cluster.sh").path
                if fileManager.fileExists(atPath: candidate) { return candidate }
                let parent = folder.deletingLastPathComponent()
                if parent.path == folder.path { break }
                folder = parent
            }
        }
        return nil
    }

    static func start() throws -> ThrowawayCluster {
        guard let script = locateScript() else {
            throw BenchFailure(
                "no --url, and no Tools/pg-cluster.sh above the current directory or the executable to start a cluster with")
        }
        let directory = NSTemporaryDirectory() + "ledger-bench-pg-\(ProcessInfo.processInfo.processIdentifier)"
        guard !FileManager.default.fileExists(atPath: directory) else {
            throw BenchFailure("\(directory) already exists; remove it or give --url")
        }
        let started = try Self.script(script, ["start", directory])
        guard started.status == 0, let url = started.stdout.split(separator: "\n").last.map(String.init),
            url.hasPrefix("postgresql://")
        else {
            let reason = started.stderr.split(separator: "\n").last.map(String.init) ?? "exit status \(started.status)"
            if FileManager.default.fileExists(atPath: directory + "/.activity-ledger-cluster") {
                _ = try? Self.script(script, ["stop", directory])
            }
            throw BenchFailure("\(script) start failed: \(reason)")
        }
        // Ctrl-C or a TERM stops the cluster before the process ends.
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                _ = try? Self.script(script, ["stop", directory])
                exit(128 + number)
            }
            source.resume()
            sources.append(source)
        }
        return ThrowawayCluster(script: script, directory: directory, url: url, signals: sources)
    }

    func stop() {
        for source in signals { source.cancel() }
        _ = try? Self.script(script, ["stop", directory])
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }

    /// Runs the script to its end with its output in files. Not through Foundation's `Process`: it learns of a
    /// child's exit from a socket the child inherits, which the server `start` leaves running inherits too, so
    /// `waitUntilExit` would wait for the server. `ChildProcess` gives it stdin, stdout and stderr and nothing else.
    private static func script(_ script: String, _ arguments: [String]) throws -> CommandRunner.Result {
        let folder = NSTemporaryDirectory() + "ledger-bench-pg-script-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let child = try ChildProcess(
            URL(fileURLWithPath: "/bin/bash"), [script] + arguments, stdout: .file(folder + "/out"),
            stderr: .file(folder + "/err"))
        let status: Int32
        switch child.waitUntilExit() {
        case .exited(let code): status = code
        case .signaled(let signal): status = 128 + signal
        }
        return CommandRunner.Result(
            status: status, stdout: (try? String(contentsOfFile: folder + "/out", encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: folder + "/err", encoding: .utf8)) ?? "")
    }
}
