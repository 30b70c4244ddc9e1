import ArgumentParser
import Foundation
import LedgerTesting

/// `ledger-bench all` (what `make bench` runs): every SPEC §8 figure, each printed beside its baseline from
/// the same run, at the sizes SPEC §8 names. `--quick` runs the same steps at a tenth of the size, to check
/// the harness; its figures are not the SPEC's.
///
/// The crash figure of §8 (kill -9 under load) is a test, not a timing: `make test` runs it
/// (Tests/LedgerServerTests/ServeCrashTests.swift and Tests/LedgerStoreTests/CrashTests.swift).
struct AllBenchmarks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "all",
        abstract: "Every SPEC §8 figure beside its baseline: store, ledger, nightly, HTTP, APNs proxy, PostgreSQL and memory.",
        discussion: "Example: ledger-bench all --quick --directory /tmp")

    @Flag(help: "A tenth of the SPEC sizes (checks the harness; the figures are not the SPEC's).") var quick = false
    @Option(help: "Directory for the benchmark files.") var directory = NSTemporaryDirectory()
    @Option(help: "Steps to skip, comma-separated: memory, store, ledger, nightly, http, apns, postgres.") var skip = ""

    func run() async throws {
        let scale = quick ? 10 : 1
        let skipped = Set(skip.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        let d = directory
        // Each step runs in a process of its own (`run`); memory first all the same.
        let steps: [(name: String, title: String, run: () async throws -> Void)] = [
            ("memory", "resident memory while importing 10M events", {
                try await Self.run(MemoryBenchmark.self, ["--events", "\(10_000_000 / scale)", "--directory", d])
            }),
            ("store", "import, read and bytes/event of the event log", {
                try await Self.run(StoreBenchmark.self, ["--events", "\(500_000 / scale)", "--directory", d])
            }),
            ("ledger", "import with projections, rebuild, state --at, timeline, audit in a 1M-event ledger", {
                try await Self.run(
                    LedgerBenchmark.self, ["--events", "\(1_000_000 / scale)", "--samples", "1000", "--directory", d])
            }),
            ("nightly", "nightly reconciliation over 1M activities", {
                try await Self.run(NightlyBenchmarkCommand.self, ["--activities", "\(1_000_000 / scale)", "--directory", d])
            }),
            ("http", "HTTP appends in batches of 100 and single events, durable", {
                try await Self.run(
                    HTTPBenchmark.self, ["--events", "\(300_000 / scale)", "--singles", "\(30_000 / scale)", "--directory", d])
            }),
            ("apns", "APNs proxy: added latency and pushes/s beside direct to a fake APNs", {
                try await Self.run(
                    APNsProxyBenchmark.self,
                    ["--pushes", "\(5_000 / scale)", "--seconds", quick ? "2" : "10", "--directory", d])
            }),
            // On a throwaway cluster of its own (Tools/pg-cluster.sh), started and stopped by the step.
            ("postgres", "PostgreSQL backend, batches of 100, beside plain PostgreSQL inserts of the raw JSON lines", {
                try await Self.run(PostgresBenchmark.self, ["--events", "\(200_000 / scale)", "--batch", "100"])
            }),
        ]
        for step in steps where !skipped.contains(step.name) {
            print("\n=== \(step.name): \(step.title)")
            let started = Date()
            try await step.run()
            print(String(format: "=== %@ done in %.1f s", step.name, Date().timeIntervalSince(started)))
        }
    }

    /// Runs one benchmark command with `arguments` in a process of its own (this executable, the command's name
    /// first), as a user runs each of them: what one step leaves in memory (1.6 GB after the ledger step's queries)
    /// or in the allocator's state does not weigh on the next one's timings, and both sides of each figure still
    /// run in the same process, in the same run. Its output goes straight to this one's.
    private static func run<Command: AsyncParsableCommand>(_ command: Command.Type, _ arguments: [String]) async throws {
        guard let name = Command.configuration.commandName else { throw ValidationError("\(Command.self) has no name") }
        fflush(nil)  // what `print` buffered goes before the child's output
        let executable = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        let child = try ChildProcess(executable, [name] + arguments, stdout: .inherit, stderr: .inherit)
        let termination = child.waitUntilExit()
        guard termination == .exited(0) else { throw ValidationError("step \(name) ended \(termination)") }
    }
}
