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
}
