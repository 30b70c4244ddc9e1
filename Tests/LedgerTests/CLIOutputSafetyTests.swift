import Foundation
import LedgerTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the CLI writes and where: output options that keep devices, FIFOs, descriptors and symlinks, that never
/// name the ledger, new files refused in one line when they cannot be made, and error messages on one line.
@Suite("activity-ledger output safety")
struct CLIOutputSafetyTests {
    let directory = TemporaryDirectory()
    var db: String { directory.file("out.sqlite") }

    static let leakedTruth = #"{"activity":"R1","state":{"eta":3},"done":true,"at":"2026-11-20T21:10:00Z"}"#

    func cli(_ arguments: String..., input: String? = nil) throws -> CommandRunner.Result {
        try cli(arguments, input: input)
    }

    func cli(_ arguments: [String], input: String? = nil) throws -> CommandRunner.Result {
        let runner = try #require(CommandRunner("activity-ledger"), "activity-ledger not built next to the tests")
        return try runner.run(arguments, input: input)
    }

    /// Runs the CLI from the folder `folder` (relative paths are in it).
    func cli(in folder: String, _ arguments: [String]) throws -> CommandRunner.Result {
        let binary = try #require(CommandRunner("activity-ledger")).executable.path
        let shell = CommandRunner(executable: URL(fileURLWithPath: "/bin/sh"))
        return try shell.run(["-c", #"cd "$1" && shift && exec "$@""#, "sh", folder, binary] + arguments)
    }

    func imported() throws {
        let path = directory.file("ride.jsonl")
        try QueryTests.ride.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try cli("import", path, "--db", db)
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// The command line writing its output to `path` with each of the three output options.
    func writing(_ option: String, to path: String) throws -> [String] {
        switch option {
        case "export": return ["export", "--db", db, "--out", path]
        case "report": return ["report", "R1", "--db", db, "--out", path]
        default:
            let truth = directory.file("truth.jsonl")
            try Self.leakedTruth.write(toFile: truth, atomically: true, encoding: .utf8)
            return [
                "reconcile", "nightly", "--truth", truth, "--run-id", "run-\(UUID())", "--at", "2026-11-20T21:10:00Z",
                "--db", db, "--actions", path,
            ]
        }
    }

    func fileType(_ path: String) -> mode_t? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return info.st_mode & S_IFMT
    }

    func oneLine(_ result: CommandRunner.Result) -> Bool {
        result.stderr.hasPrefix("activity-ledger: ") && result.stderr.split(separator: "\n").count == 1
            && !result.stderr.dropLast().contains(where: { $0.isNewline || $0 == "\u{1B}" || $0 == "\0" })
    }

    @Test(
        "a FIFO given to --out or --actions is written into and stays a FIFO",
        arguments: ["export", "report", "nightly"])
    func fifoStaysAFIFO(command: String) throws {
        try imported()
        let fifo = directory.file("pipe-\(command)")
        #expect(mkfifo(fifo, 0o600) == 0)
        // Open for reading first (without blocking), so the command's open finds a reader; the outputs fit in the
        // pipe's buffer. A command that replaced the FIFO leaves this end empty rather than hanging the test.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { close(reader) }
        let result = try cli(writing(command, to: fifo))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(fileType(fifo) == S_IFIFO)
        var received = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while case let count = read(reader, &chunk, chunk.count), count > 0 { received += chunk[..<count] }
        let text = String(decoding: received, as: UTF8.self)
        switch command {
        case "export":
            #expect(text == (try cli("export", "--db", db).stdout) && text.split(separator: "\n").count == 5)
        case "report": #expect(text.hasPrefix("<!doctype html>"), "\(text.prefix(80))")
        default: #expect(text.contains(#""action":"end""#), "\(text)")
        }
    }

    @Test("a symlink given to --out is kept; the file it points to is replaced, or made when it dangles",
        arguments: ["export", "report", "nightly"])
    func symlinkIsFollowed(command: String) throws {
        try imported()
        let target = directory.file("target-\(command)")
        try "old\n".write(toFile: target, atomically: true, encoding: .utf8)
        let link = directory.file("link-\(command)")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "target-\(command)")
        let result = try cli(writing(command, to: link))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(fileType(link) == S_IFLNK)
        #expect(fileType(target) == S_IFREG)
        #expect(try String(contentsOfFile: target, encoding: .utf8) != "old\n")

        let dangling = directory.file("dangling-\(command)")
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: "made-\(command)")
        #expect(try cli(writing(command, to: dangling)).status == 0)
        #expect(fileType(dangling) == S_IFLNK)
        #expect(fileType(directory.file("made-\(command)")) == S_IFREG)
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains("partial") }
        #expect(left.isEmpty, "\(left)")
    }

    @Test("--out >(…) of a shell's process substitution is written through its /dev/fd descriptor")
    func processSubstitution() throws {
        try imported()
        let binary = try #require(CommandRunner("activity-ledger")).executable.path
        let copy = directory.file("through-fd.jsonl")
        let script = #""$0" export --db "$1" --out >(cat > "$2"); status=$?; wait $!; exit $status"#
        let shell = CommandRunner(executable: URL(fileURLWithPath: "/bin/bash"))
        let result = try shell.run(["-c", script, binary, db, copy])
        #expect(result.status == 0, "\(result.stderr)")
        let written = try String(contentsOfFile: copy, encoding: .utf8)
        #expect(written == (try cli("export", "--db", db).stdout) && written.split(separator: "\n").count == 5)
    }

    @Test("--out - is standard output (export's lines, report's page)")
    func dashIsStandardOutput() throws {
        try imported()
        let exported = try cli(in: directory.path, ["export", "--db", db, "--out", "-"])
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(exported.stdout == (try cli("export", "--db", db).stdout))
        #expect(exported.stdout.split(separator: "\n").count == 5)
        let report = try cli(in: directory.path, ["report", "R1", "--db", db, "--out", "-"])
        #expect(report.status == 0, "\(report.stderr)")
        #expect(report.stdout.hasPrefix("<!doctype html>"))
        #expect(!FileManager.default.fileExists(atPath: directory.file("-")))
    }

    @Test(
        "an output naming the ledger or its -wal/-shm/-journal (also through a symlink) exits 2, writing nothing",
        arguments: ["export", "report", "nightly", "replay", "backup", "copy"])
    func ledgerIsNeverAnOutput(command: String) throws {
        try imported()
        let link = directory.file("ledger-link")
        try? FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "out.sqlite")
        for path in [db, link, db + "-wal", db + "-shm", db + "-journal", directory.file("./out.sqlite")] {
            let before = try Data(contentsOf: URL(fileURLWithPath: db))
            let arguments: [String]
            let option: String
            switch command {
            case "replay": (arguments, option) = (["replay", "--position", "3", "--db", db, "--into", path], "--into")
            case "backup": (arguments, option) = (["backup", "--db", db, "--into", path], "--into")
            case "copy": (arguments, option) = (["copy", "--from", db, "--to", path], "--to")
            default:
                arguments = try writing(command, to: path)
                option = command == "nightly" ? "--actions" : "--out"
            }
            let result = try cli(arguments)
            #expect(result.status == 2, "\(path): \(result.status) \(result.stderr)")
            #expect(oneLine(result) && result.stderr.contains(option), "\(result.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: db)) == before, "\(path)")
            for suffix in ["-wal", "-shm", "-journal"] {
                let companion = try? Data(contentsOf: URL(fileURLWithPath: db + suffix))
                #expect(companion.map { !$0.starts(with: Array("<!doctype".utf8)) && !$0.starts(with: [0x7B]) } ?? true)
            }
        }
        #expect(try cli("verify", "--db", db).status == 0)
    }

    @Test("input echoed into an error message is printed on one line, its control characters escaped")
    func errorsStayOneLine() throws {
        try imported()
        let event = #"{"stream":"activity:R1","type":"x\r\nFAKE\u001b[31m\u0000","at":1,"data":{}}"#
        let imported = try cli("import", "-", "--db", db, input: event)
        #expect(imported.status == 2)
        #expect(oneLine(imported), "\(imported.stderr)")
        #expect(imported.stderr.contains(#""x\r\nFAKE\u001B[31m\u0000""#), "\(imported.stderr)")

        let revoked = try cli("keys", "revoke", "a\nb", "--db", db)
        #expect(revoked.status == 1)
        #expect(oneLine(revoked) && revoked.stderr.contains(#"'a\nb'"#), "\(revoked.stderr)")

        let state = try cli("state", "a\nb\u{1B}[2J\r", "--db", db)
        #expect(state.status == 1)
        #expect(oneLine(state) && state.stderr.contains(#"a\nb\u001B[2J\r"#), "\(state.stderr)")

        let usage = try cli("state", "R1", "--at", "a\nFAKE", "--db", db)
        #expect(usage.status == 2)
        #expect(oneLine(usage), "\(usage.stderr)")
    }

    @Test("keys create with a control character in --app exits 2 in one line and leaves the file as it was")
    func keyWithControlCharacter() throws {
        try imported()
        let before = try Data(contentsOf: URL(fileURLWithPath: db))
        let result = try cli("keys", "create", "--app", "a\t", "--scope", "read", "--db", db)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(oneLine(result) && result.stderr.contains("--app"), "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: db)) == before)
        let fresh = directory.file("fresh.sqlite")
        #expect(try cli("keys", "create", "--app", "a\t", "--scope", "read", "--db", fresh).status == 2)
        #expect(!FileManager.default.fileExists(atPath: fresh))
    }

    @Test("a negative position exits 2 naming the option and writes nothing", arguments: [
        ["replay", "--position=-1", "--into", "neg.sqlite"], ["export", "--after=-1"],
    ])
    func negativePosition(arguments: [String]) throws {
        try imported()
        let into = arguments.firstIndex(of: "--into").map { directory.file(arguments[$0 + 1]) }
        let result = try cli(arguments.map { $0 == "neg.sqlite" ? into! : $0 } + ["--db", db])
        #expect(result.status == 2, "\(result.stderr)")
        let option = arguments[1].split(separator: "=")[0]
        #expect(oneLine(result) && result.stderr.contains(option), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        if let into { #expect(!FileManager.default.fileExists(atPath: into)) }
    }

    @Test("a new-file destination that cannot be made exits 2 naming the option and path, leaving no file anywhere",
        arguments: [
            ["replay", "--position", "3", "--into", ""], ["replay", "--position", "3", "--into", "nodir/x.sqlite"],
            ["backup", "--into", ""], ["backup", "--into", "dangling"], ["backup", "--into", "nodir/x.sqlite"],
            ["copy", "--to", "/nonexistent/x.sqlite"], ["copy", "--to", "nodir/x.sqlite"],
        ])
    func destinationRefused(arguments: [String]) throws {
        try imported()
        let work = directory.file("work")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: work + "/dangling", withDestinationPath: "nowhere/x.sqlite")
        let beside = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        let source = arguments[0] == "copy" ? ["--from", db] : ["--db", db]
        // Run from `work`: relative destinations are in it, and an empty one used to put its partial file in the
        // folder above (here `directory`).
        let result = try cli(in: work, arguments + source)
        #expect(result.status == 2, "\(result.stderr)")
        let option = arguments[arguments.count - 2]
        let named = result.stderr.contains("\(option) \(arguments.last!)")
            || (arguments.last!.isEmpty && result.stderr.contains("\(option): the path is empty"))
        #expect(oneLine(result) && named, "\(result.stderr)")
        #expect(!result.stderr.contains("NSCocoaErrorDomain") && !result.stderr.contains(db), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work) == ["dangling"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == beside.sorted())
    }

    @Test("import refuses an over-long line as soon as it passes the limit, without reading the rest")
    func overlongLineRefusedAtOnce() throws {
        let binary = try #require(CommandRunner("activity-ledger")).executable
        let timeout = URL(fileURLWithPath: "/usr/bin/timeout")
        let runner = CommandRunner(executable: binary, launcher: timeout, prefix: ["10"])
        let long = directory.file("long.jsonl")
        try Data(repeating: UInt8(ascii: "a"), count: 10 << 20).write(to: URL(fileURLWithPath: long))
        for input in [long, "/dev/zero"] {
            let started = Date()
            let result = try runner.run(["import", input, "--db", db])
            #expect(result.status == 2, "\(input): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("line 1"), "\(result.stderr)")
            // (Reading all of /dev/zero never ends: `timeout` would end it at 10 s with another status. The bound
            // leaves a loaded machine room to start the process.)
            #expect(Date().timeIntervalSince(started) < 6, "\(input)")
        }
    }
}
