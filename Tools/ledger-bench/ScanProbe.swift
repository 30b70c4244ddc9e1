import ArgumentParser
import Foundation
import GRDB
import Ledger
import LedgerStore
import LedgerTesting
import Logging

/// `ledger-bench scan --db PATH`: reads an existing ledger's whole log with `EventStore.forEachEvent` (with
/// `--views`, `forEachEventView`) a few times and prints events/s — a steady target for `perf record` when working on the read path. With
/// `--timelines N` it times N timelines of random activities instead (the app-less namespace's, as the bench's
/// corpus has), the file opened cold in this process as another process would; with `--states N`, N states.
struct ScanProbe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan", abstract: "Time full scans of an existing ledger file (for profiling reads).")

    @Option(help: "Ledger file to read (not modified).") var db: String
    @Option(help: "Full scans to run.") var rounds: Int = 3
    @Flag(help: "Compute sealed events' chain hashes (as the feed and export do).") var hashes = false
    @Flag(help: "Lend each event as a view (`forEachEventView`, as a rebuild reads) instead of building it.")
    var views = false
    @Option(help: "Instead of scans: time this many timelines of random activities, the file opened cold.")
    var timelines: Int = 0
    @Option(help: "Instead of scans: time this many states (state --at) of random activities, as the bench asks.")
    var states: Int = 0

    func run() async throws {
        if timelines > 0 { return try await timeTimelines() }
        if states > 0 { return try await timeStates() }
        var configuration = StoreConfiguration()
        configuration.readOnly = true
        let store = try EventStore(path: db, configuration: configuration, logger: Logger(label: "scan"))
        for round in 1...max(1, rounds) {
            var count = 0
            var bytes = 0
            let cpuStart = Self.processCPUSeconds()
            let seconds = try await Measure.seconds {
                if views {
                    try store.pool.read { db in
                        try store.forEachEventView(in: db, after: 0, transform: { $0.payload.count }) { _, size in
                            count += 1
                            bytes += size
                            return true
                        }
                    }
                } else {
                    try store.forEachEvent(after: 0, hashes: hashes) { event in
                        count += 1
                        bytes += event.payload.count
                        return true
                    }
                }
            }
            let cpu = Self.processCPUSeconds() - cpuStart
            print(String(format: "scan %d: %d events, %d payload bytes, %.3f s, %.0f events/s, %.2f µs CPU/event",
                round, count, bytes, seconds, Double(count) / seconds, cpu * 1e6 / Double(max(count, 1))))
        }
    }

    /// Timelines of `timelines` random activities (seed 2026) on a read-only ledger opened here, so sealed
    /// segments' hashes start cold, as in another process: p50/p99 wall and CPU, as the ledger bench prints them.
    func timeTimelines() async throws {
        let ledger = try Ledger(path: db, configuration: .readOnly, logger: Logger(label: "scan"))
        let all = try await ledger.pool.read { db in try String.fetchAll(db, sql: "SELECT activity FROM activities") }
        guard !all.isEmpty else { throw ValidationError("the ledger has no activities") }
        var random = SeededRandom(seed: 2026)
        var samples: [LedgerBenchmark.Sample] = []
        for _ in 0..<timelines {
            let activity = all.randomElement(using: &random)!
            samples.append(try await LedgerBenchmark.time { _ = try await ledger.timeline(activity: activity) })
        }
        let figures = LedgerBenchmark.percentiles(samples)
        print(String(format: "%d timelines, cold: p50 %.3f ms p99 %.3f ms; on CPU p50 %.3f ms p99 %.3f ms; total %.0f ms",
            timelines, figures.p50, figures.p99, figures.cpuP50, figures.cpuP99, samples.map(\.wall).reduce(0, +)))
    }

    /// `states` states of random activities (seed 2026) asked as the ledger bench asks them
    /// (`LedgerBenchmark.stateQuestions`), through the async API: p50/p99 wall and CPU.
    func timeStates() async throws {
        let ledger = try Ledger(path: db, configuration: .readOnly, logger: Logger(label: "scan"))
        let all = try await ledger.pool.read { db in try String.fetchAll(db, sql: "SELECT activity FROM activities") }
        guard !all.isEmpty else { throw ValidationError("the ledger has no activities") }
        var random = SeededRandom(seed: 2026)
        let questions = try await LedgerBenchmark.stateQuestions(
            ledger, activities: all, count: states, random: &random)
        var samples: [LedgerBenchmark.Sample] = []
        for (activity, at) in questions {
            samples.append(try await LedgerBenchmark.time { _ = try await ledger.state(activity: activity, at: at) })
        }
        let figures = LedgerBenchmark.percentiles(samples)
        print(String(
            format: "%d states: p50 %.3f ms p99 %.3f ms; on CPU p50 %.3f ms p99 %.3f ms; total %.0f ms", states,
            figures.p50, figures.p99, figures.cpuP50, figures.cpuP99, samples.map(\.wall).reduce(0, +)))
    }

    /// CPU time of the whole process (every thread), to compare runs on a shared machine.
    static func processCPUSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
