import ActivityModel
import ArgumentParser
import Foundation
import GRDB
import Ledger
import LedgerStore
import LedgerTesting
import Logging

/// The Ledger's figures of SPEC §8 (import with projections, rebuild, state --at, timeline, audit), each beside
/// a plain-SQLite raw-JSON baseline doing the naive equivalent in the same run on the same corpus.
struct LedgerBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger", abstract: "Import with projections, rebuild and queries vs raw JSON in SQLite.")

    @Option(help: "Events in the corpus.") var events = 200_000
    @Option(help: "Events per activity (SPEC §8 asks state --at for an activity with 100 events).") var perActivity = 100
    @Option(help: "full, normal or off.") var durability = "full"
    @Option(help: "Queries to time for each percentile figure.") var samples = 1_000
    @Option(help: "Directory for the benchmark files.") var directory = NSTemporaryDirectory()
    @Option(help: "Corpus seed.") var seed: UInt64 = 2026
    @Option(help: "Events per sealed segment.") var segmentEvents = StoreConfiguration().segmentEvents
    @Option(help: "zstd level of sealed blocks.") var sealLevel = Int(StoreConfiguration().sealLevel)

    func run() async throws {
        guard let level = StoreConfiguration.Durability(rawValue: durability) else {
            throw ValidationError("--durability must be full, normal or off")
        }
        let corpus = CorpusGenerator(seed: seed, activities: max(1, events / perActivity), eventsPerActivity: perActivity)
        let pid = ProcessInfo.processInfo.processIdentifier
        let jsonl = directory + "/bench-ledger-\(pid).jsonl"
        let importedPath = directory + "/bench-ledger-imported-\(pid).sqlite"
        let ledgerPath = directory + "/bench-ledger-\(pid).sqlite"
        let basePath = directory + "/bench-ledger-raw-\(pid).sqlite"
        defer {
            try? FileManager.default.removeItem(atPath: jsonl)
            Measure.removeDatabase(importedPath)
            Measure.removeDatabase(ledgerPath)
            Measure.removeDatabase(basePath)
        }
        var lines: [String] = []
        lines.reserveCapacity(corpus.count)
        for line in corpus.lines() { lines.append(line) }
        try (lines.joined(separator: "\n") + "\n").write(toFile: jsonl, atomically: false, encoding: .utf8)
        print("corpus: \(corpus.count) events, \(corpus.activities) activities of \(perActivity) events, synchronous=\(durability)")

        // Import: the whole file in one durable transaction, both sides, `importRuns` times each into a new file,
        // alternating (the baseline's, then ours), medians printed: one run of each, as until session 43, let a
        // drift of this machine's speed (±10 % within minutes) or one slow run decide the ratio. Each starts with
        // nothing dirty in the kernel: the corpus file just written (~380 MB at 1M events) and the other side's
        // file would otherwise be written back inside the next timing (as the nightly and HTTP benches do). The
        // last run's files stay for the steps below.
        var configuration = LedgerConfiguration()
        configuration.store.durability = level
        configuration.store.segmentEvents = segmentEvents
        configuration.store.sealLevel = Int32(sealLevel)
        var baseImports: [Double] = []
        var ledgerImports: [Double] = []
        var lastBaseline: NaiveJSONLedger?
        var lastImported: Ledger?
        for _ in 0..<Self.importRuns {
            lastBaseline = nil
            await lastImported?.close()
            lastImported = nil
            for path in [basePath, importedPath] { Measure.removeDatabase(path) }
            sync()
            let baseline = try NaiveJSONLedger(path: basePath, synchronous: durability)
            baseImports.append(try await Measure.seconds { try baseline.importAll(lines) })
            lastBaseline = baseline
            sync()
            // The import a user runs into a new file: it seals whole segments as it goes (`ImportSealer`).
            let imported = try Ledger(path: importedPath, configuration: configuration, logger: Logger(label: "bench"))
            ledgerImports.append(try await Measure.seconds {
                _ = try await imported.importJSONLines(try JSONLinesReader(path: jsonl))
            })
            lastImported = imported
        }
        guard let baseline = lastBaseline, let imported = lastImported else { return }
        let (baseImport, ledgerImport) = (Measure.median(baseImports), Measure.median(ledgerImports))
        Self.row(
            "import (decode, compress, hash, projections)", lines.count, ledgerImport, baseline: baseImport,
            note: "target ≥ 1.0x; sealed as it goes; medians of \(Measure.list(ledgerImports)) s"
                + " beside \(Measure.list(baseImports)) s")
        let importedStats = try imported.store.stats()
        print(String(
            format: "%-46@ %10.1f B/event   %lld of %lld events sealed (pages in use, as the sealed size below)",
            "  imported size" as NSString, Double(try await Self.bytesInUse(imported)) / Double(lines.count),
            importedStats.sealedEvents, importedStats.events))
        // The rows' figures, then `seal`'s: the same corpus imported as rows (`import --rows`).
        sync()
        let ledger = try Ledger(path: ledgerPath, configuration: configuration, logger: Logger(label: "bench"))
        let rowImport = try await Measure.seconds {
            _ = try await ledger.importJSONLines(try JSONLinesReader(path: jsonl), sealing: false)
        }
        Self.row("  import as rows (--rows)", lines.count, rowImport, baseline: ledgerImport,
                 note: "beside it: the import")
        // A row per event at its leanest: rows with only the two keys SPEC §6 gives every event (unique id; stream +
        // version) and 128 bytes of the line (about what the ledger stores per row besides them), one durable
        // transaction, no compression, hash chain or projections.
        let keyedPath = directory + "/bench-ledger-keyed-\(pid).sqlite"
        defer { Measure.removeDatabase(keyedPath) }
        var keyAssigner = RawJSONBaseline.KeyAssigner()
        let keyedRows = corpus.map { (line: String($0.line.prefix(RawJSONBaseline.leanRowBytes)), keys: keyAssigner.keys(id: $0.id, stream: $0.stream)) }
        let keyed = RawJSONBaseline(path: keyedPath, synchronous: durability.uppercased(), keyed: true)
        let keyedPool = try keyed.open()
        let keyedImport = try await Measure.seconds { try keyed.importKeyedBatches([keyedRows], into: keyedPool) }
        Self.row("  128-byte rows + unique id, (stream, version)", lines.count, keyedImport, baseline: rowImport,
                 note: "a row per event at its leanest; beside it: the rows import")

        // Rebuild: every projection from the log, vs parsing every raw row.
        let baseRebuild = try await Measure.seconds { try baseline.parseAll() }
        let ledgerRebuild = try await Self.rebuildPasses(ledger)
        Self.row("rebuild all projections (median of 3)", lines.count, ledgerRebuild, baseline: baseRebuild,
                 note: "target ≥ 1M/s")
        // The ceiling of rebuild: reading (and decompressing) the log it folds, nothing else.
        let (scanned, readPass) = try await Self.readPass(ledger, hashes: true)
        Self.row("  read + decompress the log (median of 5 passes)", scanned, readPass, baseline: ledgerRebuild,
                 note: "ceiling of rebuild; beside it: rebuild")

        // Queries on random activities at random times inside their life.
        var random = SeededRandom(seed: seed)
        let picks = try await Self.stateQuestions(
            ledger, activities: Self.activityIDs(lines), count: samples, random: &random)
        let times = picks.map(\.1)
        try await Self.queries(ledger: ledger, baseline: baseline, picks: picks, times: times, perActivity: perActivity, label: "")

        // Both files checkpointed: the baseline's single big transaction leaves a WAL as large as its table, and
        // counting it (as this bench did until 2026-11-22) doubled the baseline and the ratio with it.
        try await ledger.pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try await baseline.pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        let ledgerBytes = Measure.fileBytes(ledgerPath)
        let baseBytes = Measure.fileBytes(basePath)
        print(String(
            format: "%-46@ %10.1f B/event   baseline %10.1f B/event   baseline/ledger %.2fx (with projections; target ≥ 6x)",
            "file size" as NSString, Double(ledgerBytes) / Double(lines.count), Double(baseBytes) / Double(lines.count),
            Double(baseBytes) / Double(max(ledgerBytes, 1))))

        // Sealed: the same ledger after `seal`, every figure again.
        let sealSeconds = try await Measure.seconds { _ = try await ledger.seal() }
        Self.row(
            "seal (rows into segments)", lines.count, sealSeconds, baseline: rowImport,
            note: "beside it: import --rows")
        let inUse = try await Self.bytesInUse(ledger)
        print(String(
            format: "%-46@ %10.1f B/event   baseline %10.1f B/event   baseline/ledger %.2fx (pages in use; target ≥ 6x)",
            "sealed size" as NSString, Double(inUse) / Double(lines.count), Double(baseBytes) / Double(lines.count),
            Double(baseBytes) / Double(max(inUse, 1))))
        let (lentScanned, lentRead) = try await Self.viewPass(ledger)
        Self.row("read + decompress, sealed, events lent", lentScanned, lentRead, baseline: readPass,
                 note: "target ≥ 2M/s; as a rebuild reads; beside it: rows")
        let (sealedScanned, sealedRead) = try await Self.readPass(ledger, hashes: false)
        Self.row("  events built (no hashes)", sealedScanned, sealedRead, baseline: lentRead,
                 note: "each a RecordedEvent; beside it: lent")
        let (hashedScanned, hashedRead) = try await Self.readPass(ledger, hashes: true)
        Self.row("  with chain hashes (feed, export)", hashedScanned, hashedRead, baseline: sealedRead,
                 note: "beside it: without")
        let sealedRebuild = try await Self.rebuildPasses(ledger)
        Self.row("rebuild all projections, sealed (median of 3)", lines.count, sealedRebuild, baseline: ledgerRebuild,
                 note: "target ≥ 1M/s; beside it: rows")
        // The sealing process starts with every sealed segment's hashes; another process (a CLI query, a restarted
        // serve) decodes a segment the first time it needs one of its hashes.
        try await Self.queries(
            ledger: ledger, baseline: baseline, picks: picks, times: times, perActivity: perActivity,
            label: ", sealed (hashes from sealing)")
        var cold = LedgerConfiguration.readOnly
        cold.store.durability = level
        let reopened = try Ledger(path: ledgerPath, configuration: cold, logger: Logger(label: "bench"))
        try await Self.queries(
            ledger: reopened, baseline: baseline, picks: picks, times: times, perActivity: perActivity,
            label: ", sealed, another process")
    }

    /// Whole passes over the log doing nothing with the events: (events read, median seconds of `passes`). One pass
    /// of one binary ranged 0.8–2.0M events/s within minutes on this machine (BENCHMARKS.md, session 17), so a
    /// single pass mostly measured the moment.
    static func readPass(_ ledger: Ledger, hashes: Bool, passes: Int = 5) async throws -> (Int, Double) {
        var count = 0
        var times: [Double] = []
        for _ in 0..<passes {
            count = 0
            times.append(try await Measure.seconds {
                try ledger.store.forEachEvent(after: 0, hashes: hashes) { _ in
                    count += 1
                    return true
                }
            })
        }
        return (count, Measure.median(times))
    }

    /// The bench's `state --at` questions: `count` random activities, then for each a random time of the four hours
    /// from its start (most of the corpus's activities have ended by then).
    static func stateQuestions(
        _ ledger: Ledger, activities: [String], count: Int, random: inout SeededRandom
    ) async throws -> [(String, Instant)] {
        let picked = (0..<count).map { _ in activities.randomElement(using: &random)! }
        let farFuture = Instant(milliseconds: 4_000_000_000_000)
        var questions: [(String, Instant)] = []
        for activity in picked {
            let start = try await ledger.state(activity: activity, at: farFuture).startsAt
            let offset = Int64.random(in: 0...(4 * 3_600_000), using: &random)
            questions.append((activity, start.adding(milliseconds: offset)))
        }
        return questions
    }

    /// Median seconds of `passes` whole rebuilds: one rebuild of the same binary and file ranged ±10 % between runs
    /// minutes apart (BENCHMARKS.md, session 19), like the read passes above.
    static func rebuildPasses(_ ledger: Ledger, passes: Int = 3) async throws -> Double {
        var times: [Double] = []
        for _ in 0..<passes {
            times.append(try await Measure.seconds { _ = try await ledger.rebuild() })
        }
        return Measure.median(times)
    }

    /// Whole passes over the log with each event lent as a view (`EventStore.forEachEventView`, what a rebuild
    /// reads through), doing nothing with them: (events read, median seconds of `passes`).
    static func viewPass(_ ledger: Ledger, passes: Int = 5) async throws -> (Int, Double) {
        var count = 0
        var times: [Double] = []
        for _ in 0..<passes {
            count = 0
            times.append(try await Measure.seconds {
                try ledger.store.pool.read { db in
                    try ledger.store.forEachEventView(in: db, after: 0, transform: { $0.payload.count }) { _, _ in
                        count += 1
                        return true
                    }
                }
            })
        }
        return (count, Measure.median(times))
    }

    /// state --at, timeline and audit on random activities, beside the baseline's naive state.
    static func queries(
        ledger: Ledger, baseline: NaiveJSONLedger, picks: [(String, Instant)], times: [Instant], perActivity: Int,
        label: String
    ) async throws {
        let samples = picks.count
        var stateSamples: [Sample] = []
        var coreSamples: [Sample] = []
        var baseStateSamples: [Sample] = []
        for i in picks.indices {
            stateSamples.append(try await Self.time { _ = try await ledger.state(activity: picks[i].0, at: times[i]) })
            // The same answer without the async API's hop to the ledger's read threads and back.
            coreSamples.append(try await Self.time {
                _ = try ledger.pool.read { db in try ledger.state(db, activity: picks[i].0, asOf: times[i], app: nil) }
            })
            baseStateSamples.append(try await Self.time {
                _ = try baseline.naiveState(activity: picks[i].0, at: times[i].rfc3339)
            })
        }
        let statePercentiles = Self.percentiles(stateSamples)
        let corePercentiles = Self.percentiles(coreSamples)
        let baseStatePercentiles = Self.percentiles(baseStateSamples)
        Self.latency("state --at (activity of \(perActivity) events)" + label, statePercentiles, baseline: baseStatePercentiles, note: "target p99 ≤ 1 ms; async API")
        Self.latency("  the read and fold alone", corePercentiles, baseline: baseStatePercentiles, note: "no thread hop")
        let subset = Array(picks.prefix(max(1, samples / 5)))
        var timelineSamples: [Sample] = []
        var auditSamples: [Sample] = []
        var baseAllSamples: [Sample] = []
        for pick in subset {
            timelineSamples.append(try await Self.time { _ = try await ledger.timeline(activity: pick.0) })
            auditSamples.append(try await Self.time { _ = try await ledger.audit(activity: pick.0) })
            baseAllSamples.append(try await Self.time { _ = try baseline.naiveState(activity: pick.0, at: "9999") })
        }
        let timeline = Self.percentiles(timelineSamples)
        let audit = Self.percentiles(auditSamples)
        let baseAll = Self.percentiles(baseAllSamples)
        Self.latency("timeline (whole activity)" + label, timeline, baseline: baseAll, note: "target ≤ 5 ms")
        Self.latency("audit (whole activity)" + label, audit, baseline: baseAll, note: "target ≤ 5 ms")

    }

    /// The activity of every request in the corpus.
    static func activityIDs(_ lines: [String]) -> [String] {
        lines.compactMap { line in
            guard line.contains("\"type\":\"request\""), let range = line.range(of: "\"stream\":\"activity:") else { return nil }
            let rest = line[range.upperBound...]
            return String(rest[..<rest.firstIndex(of: "\"")!])
        }
    }

    /// One query's wall-clock and on-CPU milliseconds. The CPU time (this thread's, preemption excluded) is the
    /// figure to compare across runs on a shared machine; the wall time is what a caller waits.
    struct Sample {
        var wall: Double
        var cpu: Double
    }

    struct Latency {
        var p50: Double
        var p99: Double
        var cpuP50: Double
        var cpuP99: Double
    }

    /// The process's CPU time, not the calling thread's: the ledger's queries run on GRDB's reader queues.
    static func time(_ body: () async throws -> Void) async throws -> Sample {
        let cpuStart = processCPUNanoseconds()
        let start = DispatchTime.now().uptimeNanoseconds
        try await body()
        let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
        return Sample(wall: wall, cpu: Double(processCPUNanoseconds() - cpuStart) / 1e6)
    }

    static func processCPUNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    static func percentiles(_ samples: [Sample]) -> Latency {
        func p(_ values: [Double]) -> (Double, Double) {
            let sorted = values.sorted()
            return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, sorted.count * 99 / 100)])
        }
        let wall = p(samples.map(\.wall))
        let cpu = p(samples.map(\.cpu))
        return Latency(p50: wall.0, p99: wall.1, cpuP50: cpu.0, cpuP99: cpu.1)
    }

    /// The ledger file's pages in use (free pages, e.g. of purged rows, left out), after a checkpoint.
    static func bytesInUse(_ ledger: Ledger) async throws -> Int64 {
        try await ledger.pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        return try await ledger.pool.read { db in
            let pages = try Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            let free = try Int64.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
            let size = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
            return (pages - free) * size
        }
    }

    /// Imports timed on each side (alternating; the printed figure is their median).
    static let importRuns = 3

    static func row(_ name: String, _ count: Int, _ seconds: Double, baseline: Double, note: String) {
        print(String(
            format: "%-46@ %10.0f /s   baseline %10.0f /s   ratio %.2f   (%@)", name as NSString,
            Double(count) / seconds, Double(count) / baseline, baseline / seconds, note as NSString))
    }

    static func latency(_ name: String, _ value: Latency, baseline: Latency, note: String) {
        print(String(
            format: "%-46@ p50 %6.3f ms p99 %6.3f ms   baseline p50 %6.3f ms p99 %6.3f ms   (%@)", name as NSString,
            value.p50, value.p99, baseline.p50, baseline.p99, note as NSString))
        print(String(
            format: "%-46@ p50 %6.3f ms p99 %6.3f ms   baseline p50 %6.3f ms p99 %6.3f ms", "  on CPU" as NSString,
            value.cpuP50, value.cpuP99, baseline.cpuP50, baseline.cpuP99))
    }
}
