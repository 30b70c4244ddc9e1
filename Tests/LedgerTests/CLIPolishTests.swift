import Foundation
import GRDB
import LedgerTesting
import Testing

/// Bad options are refused in the CLI's own terms: every `--app` by one rule, messages naming the option typed,
/// a `--db` that cannot be a ledger said plainly; a backwards window is empty, as over HTTP.
@Suite("activity-ledger options, polished")
struct CLIPolishTests {
    let directory = TemporaryDirectory()
    var db: String { directory.file("polish.sqlite") }

    func cli(_ arguments: [String], input: String? = nil) throws -> CommandRunner.Result {
        let runner = try #require(CommandRunner("activity-ledger"), "activity-ledger not built next to the tests")
        return try runner.run(arguments, input: input)
    }

    func importRide() throws -> String {
        let path = directory.file("ride.jsonl")
        try QueryTests.ride.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try cli(["import", path, "--db", db]).status == 0)
        return path
    }

    @Test("every command taking --app refuses a control character, a form other than NFC and an empty app (exit 2)",
        arguments: ["a\tb", "cafe\u{301}", ""])
    func appRule(app: String) throws {
        let ride = try importRide()
        let truth = directory.file("truth.jsonl")
        try #"{"activity":"R1","done":true}"#.write(toFile: truth, atomically: true, encoding: .utf8)
        let commands: [[String]] = [
            ["state", "R1"], ["timeline", "R1"], ["audit", "R1"], ["activities"], ["export"],
            ["report", "R1", "--out", directory.file("r.html")], ["import", ride],
            ["reconcile", "nightly", "--truth", truth, "--run-id", "n1"], ["keys", "list"],
        ]
        for command in commands {
            let result = try cli(command + ["--db", db, "--app", app])
            #expect(result.status == 2, "\(command): \(result.status) \(result.stderr)")
            #expect(result.stderr.hasPrefix("activity-ledger: --app: "), "\(command): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(command): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("r.html")))
        #expect(try cli(["stats", "--db", db, "--json"]).stdout.contains("\"events\":5"))
    }

    @Test("a refused value is named by the CLI option it came in, not the HTTP parameter")
    func optionNames() throws {
        _ = try importRide()
        for (arguments, option) in [
            (["activities", "--after", "zz"], "--after"), (["activities", "--token-prefix", "zz"], "--token-prefix"),
            (["reconcile", "nightly", "--truth", "-", "--run-id", "n\u{1}"], "--run-id"),
        ] {
            let result = try cli(arguments + ["--db", db], input: #"{"activity":"R1","done":true}"#)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("activity-ledger: \(option): "), "\(arguments): \(result.stderr)")
        }
    }

    @Test("--db naming a directory, or an empty file for a command that reads, exits 2 saying so")
    func dbThatIsNoLedger() throws {
        let folder = directory.file("folder")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for command in [["state", "R1"], ["verify"], ["stats"], ["import", "-"]] {
            let result = try cli(command + ["--db", folder], input: "")
            #expect(result.status == 2, "\(command): \(result.stderr)")
            #expect(result.stderr == "activity-ledger: --db \(folder): is a directory, not a ledger file\n")
        }
        let empty = directory.file("empty.sqlite")
        #expect(FileManager.default.createFile(atPath: empty, contents: nil))
        for command in [["state", "R1"], ["verify"], ["stats"], ["export"], ["digest"]] {
            let result = try cli(command + ["--db", empty])
            #expect(result.status == 2, "\(command): \(result.stderr)")
            #expect(result.stderr.hasPrefix("activity-ledger: --db \(empty): an empty file, not an activity ledger"))
        }
        // A writing command makes an empty file a new ledger, as before.
        #expect(try cli(["import", "-", "--db", empty], input: QueryTests.ride).status == 0)
    }

    /// Found by a probe: with another process in a read transaction (an `export` piped into a slow reader), every
    /// writing command finished its work and then waited out its whole busy timeout in the final checkpoint.
    @Test("a writing command does not wait at its exit for another process's reader")
    func exitDoesNotWaitForReaders() throws {
        _ = try importRide()
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true
        let reader = try DatabaseQueue(path: db, configuration: configuration)
        try reader.inDatabase { db in
            try db.execute(sql: "BEGIN")
            _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM events")
        }
        defer { try? reader.inDatabase { db in try db.execute(sql: "ROLLBACK") } }
        for command in [["import", "-"], ["rebuild"]] {
            let started = Date()
            let result = try cli(command + ["--db", db, "--busy-timeout", "10"], input: QueryTests.ride)
            #expect(result.status == 0, "\(command): \(result.stderr)")
            // (Waiting out the busy timeout would take 10 s; the bound leaves a loaded machine room.)
            #expect(Date().timeIntervalSince(started) < 8, "\(command) took \(Date().timeIntervalSince(started)) s")
        }
    }

    @Test("a busy timeout out of range is named by where it came from: the option or LEDGER_BUSY_TIMEOUT")
    func busyTimeoutNamed() throws {
        _ = try importRide()
        let binary = try #require(CommandRunner("activity-ledger")).executable.path
        let env = CommandRunner(executable: URL(fileURLWithPath: "/usr/bin/env"))
        let fromEnvironment = try env.run(["LEDGER_BUSY_TIMEOUT=nan", binary, "state", "R1", "--db", db])
        #expect(fromEnvironment.status == 2)
        #expect(fromEnvironment.stderr.contains("LEDGER_BUSY_TIMEOUT"), "\(fromEnvironment.stderr)")
        let fromOption = try cli(["state", "R1", "--db", db, "--busy-timeout", "7200"])
        #expect(fromOption.status == 2)
        #expect(fromOption.stderr.contains("--busy-timeout"), "\(fromOption.stderr)")
    }

    /// Found: `import` stored a content state `{"x":1e400}` that `POST /v1/events` refuses (and no device decodes).
    @Test("import refuses a number a double cannot hold, naming line and field, and writes nothing (exit 2)")
    func numberOutOfRange() throws {
        let line = #"{"stream":"activity:N1","type":"request","at":1,"data":{"attributesType":"T","attributes":{},"#
            + #""content":{"state":{"big":12345678901234567890,"tiny":1e-400,"x":[1e400]}},"pushType":"token"}}"#
        let refused = try cli(["import", "-", "--db", db], input: line + "\n")
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("line 1"), "\(refused.stderr)")
        #expect(refused.stderr.contains("data.content.state.x[0]"), "\(refused.stderr)")
        #expect(refused.stderr.contains("1e400"), "\(refused.stderr)")
        // Nothing written: not even the new ledger file the import would have made.
        #expect(!FileManager.default.fileExists(atPath: db))
        #expect(!FileManager.default.fileExists(atPath: db + "-wal"))
        #expect(try cli(["import", directory.file("missing.jsonl"), "--db", db]).status != 0)
        #expect(!FileManager.default.fileExists(atPath: db))
        // Large integers and literals that round to zero are numbers a double holds: kept as sent.
        let kept = line.replacingOccurrences(of: ",\"x\":[1e400]", with: "")
        #expect(try cli(["import", "-", "--db", db], input: kept + "\n").status == 0)
        #expect(try cli(["state", "N1", "--json", "--db", db]).stdout.contains(#""big":12345678901234567890,"tiny":1e-400"#))
    }

    @Test("a window whose --from is after its --to is empty for timeline and report, as over HTTP (exit 0)")
    func backwardsWindow() throws {
        _ = try importRide()
        let window = ["--from", "2026-11-20T21:10:00Z", "--to", "2026-11-20T21:01:00Z"]
        let timeline = try cli(["timeline", "R1", "--db", db, "--json"] + window)
        #expect(timeline.status == 0, "\(timeline.stderr)")
        #expect(timeline.stdout == #"{"activity":"R1","entries":[]}"# + "\n")
        let report = try cli(["report", "R1", "--db", db, "--json", "--out", directory.file("r.html")] + window)
        #expect(report.status == 0, "\(report.stderr)")
        #expect(report.stdout.contains(#""events":0"#) && report.stdout.contains(#""cards":0"#), "\(report.stdout)")
    }
}
