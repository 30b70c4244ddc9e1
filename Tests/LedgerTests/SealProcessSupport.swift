import ActivityModel
import Foundation
import GRDB
import LedgerTesting
import Testing

/// The real `activity-ledger` binary and files of generated events, for the tests that run `seal` as a process
/// beside others or kill it.
struct SealBench {
    let directory: TemporaryDirectory
    let runner: CommandRunner

    init(_ prefix: String) throws {
        directory = TemporaryDirectory(prefix: prefix)
        runner = try #require(CommandRunner("activity-ledger"), "activity-ledger not built next to the tests")
    }

    /// Runs the CLI to completion.
    func cli(_ arguments: String...) throws -> CommandRunner.Result {
        try runner.run(arguments)
    }

    /// Starts the CLI and returns at once; its output goes to files (a pipe nobody reads could block it).
    func start(_ name: String, _ arguments: [String]) throws -> RunningCommand {
        try RunningCommand(runner.executable, arguments, output: directory.file("\(name).out"))
    }

    /// Writes `CorpusGenerator` events as JSON Lines and returns the path.
    func corpus(_ name: String, seed: UInt64, activities: Int, eventsPerActivity: Int, start: Int64? = nil) throws -> String {
        let generator =
            start.map { CorpusGenerator(seed: seed, activities: activities, eventsPerActivity: eventsPerActivity, start: $0) }
            ?? CorpusGenerator(seed: seed, activities: activities, eventsPerActivity: eventsPerActivity)
        let path = directory.file(name)
        try (generator.lines().joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Imports `corpus` into a new file with the CLI, as rows (`--rows`: these tests seal them); returns the path.
    func ledger(_ name: String, importing corpus: String, app: String? = nil) throws -> String {
        let path = directory.file(name)
        let result = try runner.run(["import", corpus, "--db", path, "--rows"] + (app.map { ["--app", $0] } ?? []))
        #expect(result.status == 0, "import: \(result.stderr)")
        return path
    }

    /// A copy of a ledger file no process has open (with its WAL, if one was left).
    func copy(_ path: String, to name: String) throws -> String {
        let target = directory.file(name)
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: target + suffix)
            if FileManager.default.fileExists(atPath: path + suffix) {
                try FileManager.default.copyItem(atPath: path + suffix, toPath: target + suffix)
            }
        }
        return target
    }

    /// `stats --json` as (events, sealedEvents, unsealedEvents).
    func stats(_ path: String) throws -> (events: Int64, sealed: Int64, unsealed: Int64) {
        let result = try cli("stats", "--db", path, "--json")
        #expect(result.status == 0, "stats: \(result.stderr)")
        let json = try JSONParser.parse(Array(result.stdout.utf8))
        func int(_ key: String) -> Int64 { json[key]?.numberValue?.int64Value ?? -1 }
        return (int("events"), int("sealedEvents"), int("unsealedEvents"))
    }

    /// The `digest` field of `digest --json`.
    func digest(_ path: String) throws -> String {
        let result = try cli("digest", "--db", path, "--json")
        #expect(result.status == 0, "digest: \(result.stderr)")
        return try #require(try JSONParser.parse(Array(result.stdout.utf8))["digest"]?.stringValue)
    }
}

/// One CLI process started in the background.
final class RunningCommand {
    let process: ChildProcess
    let output: String

    init(_ executable: URL, _ arguments: [String], output: String) throws {
        self.output = output
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        _ = FileManager.default.createFile(atPath: output + ".err", contents: nil)
        process = try ChildProcess(executable, arguments, stdout: .file(output), stderr: .file(output + ".err"))
    }

    var isRunning: Bool { process.isRunning }

    /// Kills it without warning (SIGKILL); true when it was still running.
    func kill9() -> Bool {
        let running = process.isRunning
        process.signal(SIGKILL)
        return running && process.waitUntilExit() == .signaled(SIGKILL)
    }

    /// Waits for it and returns its exit status, standard output and standard error.
    func finish() throws -> (status: Int32, stdout: Data, stderr: String) {
        process.waitUntilExit()
        let stdout = try Data(contentsOf: URL(fileURLWithPath: output))
        let stderr = (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? ""
        return (process.terminationStatus, stdout, stderr)
    }
}

/// Counts committed segments from a read-only connection of the test's own, to time kills and overlaps.
final class SegmentWatcher {
    private let queue: DatabaseQueue

    init(_ path: String) throws {
        var configuration = Configuration()
        configuration.readonly = true
        queue = try DatabaseQueue(path: path, configuration: configuration)
    }

    func segments() throws -> Int {
        try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM segments") ?? 0 }
    }

    /// Polls every millisecond, on this thread (a task's sleep may be resumed late when other tests hold the
    /// cooperative threads), until `count` segments are committed or `process` has ended.
    func wait(until count: Int, while process: RunningCommand) {
        while process.isRunning, (try? segments()) ?? 0 < count { usleep(1_000) }
    }

    func close() throws { try queue.close() }
}
