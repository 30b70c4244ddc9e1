import Foundation
import LedgerStore
import LedgerTesting
import Testing

/// `replay` and `backup` write their new file under a temporary name and publish it whole (`PartialFile`). Found by a
/// probe: an interrupted replay left an empty ledger at `--into` that verified; two replays on one path removed each
/// other's file; a replay of a tampered log verified; an interrupted backup left its temporary copy; a failure to
/// write the new file was reported as the source ledger's.
@Suite("New files: published whole, never replacing one, named by their option")
struct NewFileTests {
    let directory = TemporaryDirectory()

    func cli(_ arguments: [String]) throws -> CommandRunner.Result {
        let runner = try #require(CommandRunner("activity-ledger"), "activity-ledger not built next to the tests")
        return try runner.run(arguments)
    }

    /// A ledger of `activities` × 20 events.
    func ledger(_ name: String, activities: Int) throws -> String {
        let corpus = directory.file("\(name).jsonl")
        try (CorpusGenerator(seed: 3, activities: activities, eventsPerActivity: 20).lines().joined(separator: "\n") + "\n")
            .write(toFile: corpus, atomically: true, encoding: .utf8)
        let db = directory.file("\(name).sqlite")
        let imported = try cli(["import", corpus, "--db", db])
        #expect(imported.status == 0, "\(imported.stderr)")
        return db
    }

    /// Files in the test's folder whose name starts with a dot (temporary files).
    func hidden() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".") }
    }

    @Test("replay refuses a log whose chain does not hold, naming the position, and writes nothing")
    func tamperedSource() throws {
        let db = try ledger("tampered", activities: 5)
        let bad = try CommandRunner(executable: URL(fileURLWithPath: "/usr/bin/env")).run(
            ["python3", "-c", "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('update events set at=at+1 where position=7'); c.commit()", db])
        try #require(bad.status == 0, "\(bad.stderr)")
        let into = directory.file("copy.sqlite")
        let replay = try cli(["replay", "--db", db, "--position", "50", "--into", into])
        #expect(replay.status == 2, "\(replay.stderr)")
        #expect(replay.stderr.contains("position 7"), "\(replay.stderr)")
        #expect(!FileManager.default.fileExists(atPath: into))
        #expect(try hidden().isEmpty)
    }

    /// Found by the same probe: with `--digest`, only the log up to the digest was checked.
    @Test("verify --digest checks the whole chain: a row changed after the digest's position fails")
    func digestChecksTheRest() throws {
        let db = try ledger("digested", activities: 5)
        let replayed = directory.file("first-50.sqlite")
        #expect(try cli(["replay", "--db", db, "--position", "50", "--into", replayed]).status == 0)
        let digest = try cli(["digest", "--db", replayed]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try cli(["verify", "--db", db, "--digest", digest]).status == 0)
        let bad = try CommandRunner(executable: URL(fileURLWithPath: "/usr/bin/env")).run(
            ["python3", "-c", "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('update events set at=at+1 where position=70'); c.commit()", db])
        try #require(bad.status == 0, "\(bad.stderr)")
        let verified = try cli(["verify", "--db", db, "--digest", digest])
        #expect(verified.status == 2, "\(verified.stdout)")
        #expect(verified.stdout.contains("70") || verified.stderr.contains("70"), "\(verified.stdout) \(verified.stderr)")
    }

    @Test("an interrupted replay or backup leaves nothing at the path and no temporary file", arguments: ["replay", "backup"])
    func interrupted(command: String) async throws {
        let db = try ledger("big-\(command)", activities: 400)
        let into = directory.file("\(command)-out.sqlite")
        let runner = try #require(CommandRunner("activity-ledger"))
        let process = Process()
        process.executableURL = runner.executable
        process.arguments = command == "replay"
            ? ["replay", "--db", db, "--position", "1000000", "--into", into] : ["backup", "--db", db, "--into", into]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The interrupt lands once the command writes its temporary file, so after it took over SIGINT: sent at a
        // fixed delay it could land before, while a loaded machine still starts the process, and end it by the
        // default action (which leaves nothing either, but tests nothing).
        let name = URL(fileURLWithPath: into).lastPathComponent
        let deadline = ContinuousClock.now + .seconds(60)
        while process.isRunning, try !hidden().contains(where: { $0.hasPrefix(".\(name).partial-") }),
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(2))
        }
        process.interrupt()
        process.waitUntilExit()
        if process.terminationStatus == 0 {
            // It finished first: then the file is whole.
            #expect(try cli(["verify", "--db", into]).status == 0)
        } else {
            #expect(process.terminationStatus == 130, "\(process.terminationReason) \(process.terminationStatus)")
            #expect(!FileManager.default.fileExists(atPath: into))
        }
        let left = try hidden()
        #expect(left.isEmpty, "\(left)")
    }

    @Test("a writer killed with -9 leaves a temporary file; the next run to that destination removes it", arguments: ["replay", "backup"])
    func killedWriterCleanedUp(command: String) async throws {
        let db = try ledger("killed-\(command)", activities: 400)
        let into = directory.file("\(command)-killed.sqlite")
        let arguments = command == "replay"
            ? ["replay", "--db", db, "--position", "1000000", "--into", into] : ["backup", "--db", db, "--into", into]
        let runner = try #require(CommandRunner("activity-ledger"))
        let process = Process()
        process.executableURL = runner.executable
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try await Task.sleep(for: .milliseconds(150))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: into)  // when it finished first
        // Planted too, whether or not the kill left one: a dead writer's (`true` has exited) and a live one's (this
        // test process is alive; its file is not the command's to remove).
        let exited = Process()
        exited.executableURL = URL(fileURLWithPath: "/bin/true")
        try exited.run()
        exited.waitUntilExit()
        let name = URL(fileURLWithPath: into).lastPathComponent
        let dead = directory.file(".\(name).partial-\(exited.processIdentifier)")
        let live = directory.file(".\(name).partial-\(getpid())")
        for path in [dead, dead + "-wal", live] {
            #expect(FileManager.default.createFile(atPath: path, contents: Data("left".utf8)))
        }
        let rerun = try cli(arguments)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(try cli(["verify", "--db", into]).status == 0)
        let left = try hidden()
        #expect(left == [URL(fileURLWithPath: live).lastPathComponent], "\(left)")
        try FileManager.default.removeItem(atPath: live)
    }

    @Test("a failure to make the new file is named by its option and path, not by the source ledger")
    func namedByOption() throws {
        let db = try ledger("small", activities: 2)
        for command in [["replay", "--position", "1"], ["backup"]] {
            let result = try cli(command + ["--db", db, "--into", "/proc/ledger-out.sqlite"])
            #expect(result.status != 0)
            #expect(result.stderr.hasPrefix("activity-ledger: --into /proc/ledger-out.sqlite"), "\(command): \(result.stderr)")
        }
        // A name of 240 bytes is a legal name: its temporary name is too.
        let long = directory.file(String(repeating: "n", count: 240) + ".sqlite")
        let backup = try cli(["backup", "--db", db, "--into", long])
        #expect(backup.status == 0, "\(backup.stderr)")
        #expect(try hidden().isEmpty)
    }

    @Test("publishing never replaces a file that appeared at the destination meanwhile")
    func neverReplaces() throws {
        let destination = directory.file("theirs.sqlite")
        let file = PartialFile(destination: destination)
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data("ours".utf8)))
        #expect(FileManager.default.createFile(atPath: destination, contents: Data("theirs".utf8)))
        #expect(throws: PartialFile.WriteError.self) { try file.publish() }
        #expect(FileManager.default.contents(atPath: destination) == Data("theirs".utf8))
        file.remove()
        #expect(try hidden().isEmpty)
        let fresh = directory.file("fresh.sqlite")
        let other = PartialFile(destination: fresh)
        #expect(FileManager.default.createFile(atPath: other.path, contents: Data("ours".utf8)))
        try other.publish()
        #expect(FileManager.default.contents(atPath: fresh) == Data("ours".utf8))
        #expect(try hidden().isEmpty)
    }
}
