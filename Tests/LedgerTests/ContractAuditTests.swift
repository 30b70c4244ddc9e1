import ActivityModel
import Foundation
import Ledger
import LedgerStore
import LedgerTesting
import Testing

/// Places where the ledger and its CLI differed from the letter of SPEC §2/§7 or the README's exit codes (the
/// audit of 2026-11-22); each test failed before its fix.
@Suite("Contract audit: import, audit JSON, CLI")
struct ContractAuditTests {
    static func dismiss(_ id: String, by: String) -> String {
        #"{"id":"\#(id)","stream":"activity:R1","type":"dismiss","at":"2026-11-20T21:00:00Z","data":{"by":"\#(by)"}}"#
    }

    @Test("an id repeated with other content later in the same file is refused at the repeating line")
    func inputRepeatNamesItsLine() async throws {
        let temp = try TemporaryLedger()
        let lines = (1...5).map { Self.dismiss("e\($0)", by: "user") } + [Self.dismiss("e2", by: "system")]
        let path = try temp.write(lines.joined(separator: "\n"), to: "repeat.jsonl")
        let error = await #expect(throws: LedgerError.self) {
            try await temp.ledger.importJSONLines(try JSONLinesReader(path: path))
        }
        #expect(error?.code == .conflict)
        #expect(error?.line == 6, "\(String(describing: error))")
        #expect(try temp.ledger.store.lastPosition() == 0)
    }

    @Test("an id already in the log is refused at its first line of the file, even when the file repeats it")
    func storedConflictNamesFirstLine() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.dismiss("e2", by: "user"))
        let lines = [Self.dismiss("e1", by: "user"), Self.dismiss("e2", by: "system"), Self.dismiss("e2", by: "user")]
        let path = try temp.write(lines.joined(separator: "\n"), to: "stored.jsonl")
        let error = await #expect(throws: LedgerError.self) {
            try await temp.ledger.importJSONLines(try JSONLinesReader(path: path))
        }
        #expect(error?.line == 2, "\(String(describing: error))")
        #expect(try temp.ledger.store.lastPosition() == 1)
    }

    @Test("audit --update JSON also has SPEC §7's audit shape: activity and flat deliveries")
    func updateAuditShape() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(QueryTests.ride)
        let audit = try await temp.ledger.audit(update: "10000000-0000-4000-8000-000000000003")
        let json = audit.json
        #expect(json["activity"] == "R1")
        let deliveries = json["deliveries"]?.arrayValue ?? []
        #expect(deliveries.count == 1)
        #expect(deliveries.first?["event"] == "10000000-0000-4000-8000-000000000003")
        #expect(deliveries.first?["verdict"] == "applied")
        #expect(deliveries.first?["reason"] == .null)
        #expect(json["audits"]?.arrayValue?.count == 1)
    }
}

@Suite("Contract audit: CLI exit codes and help")
struct CLIContractAuditTests {
    let directory = TemporaryDirectory()
    var db: String { directory.file("cli.sqlite") }

    func cli(_ arguments: String..., input: String? = nil) throws -> CommandRunner.Result {
        try cli(arguments, input: input)
    }

    func cli(_ arguments: [String], input: String? = nil) throws -> CommandRunner.Result {
        let runner = try #require(CommandRunner("activity-ledger"), "activity-ledger not built next to the tests")
        return try runner.run(arguments, input: input)
    }

    @Test("a usage error (missing, conflicting or unknown option) is bad input: exit 2, one line naming it")
    func usageErrorsExitTwo() throws {
        #expect(try cli("import", "-", "--db", db, input: QueryTests.ride).status == 0)
        let replay = try cli("replay", "--db", db, "--into", directory.file("r.sqlite"))
        #expect(replay.status == 2, "\(replay.stderr)")
        #expect(replay.stderr.contains("--until"), "\(replay.stderr)")
        #expect(replay.stderr.split(separator: "\n").count == 1, "\(replay.stderr)")
        let unknown = try cli("state", "R1", "--db", db, "--bogus")
        #expect(unknown.status == 2, "\(unknown.stderr)")
        #expect(unknown.stderr.contains("--bogus"), "\(unknown.stderr)")
        let audit = try cli("audit", "--db", db)
        #expect(audit.status == 2, "\(audit.stderr)")
        let help = try cli("state", "--help")
        #expect(help.status == 0)
        #expect(help.stdout.contains("Example"))
    }

    /// `--from` after `--to` is an empty window, as `GET /v1/activities/{id}/timeline` answers it (schema-valid
    /// input is never 400 there): the CLI's `--json` and the HTTP body are one answer (until 2026-11-27 the CLI
    /// alone refused it).
    @Test("timeline with --from after --to is an empty window; activities with --limit out of 1…1000 is bad input")
    func emptyWindowAndLimit() throws {
        #expect(try cli("import", "-", "--db", db, input: QueryTests.ride).status == 0)
        let timeline = try cli(
            "timeline", "R1", "--db", db, "--json", "--from", "2026-11-20T22:00:00Z", "--to", "2026-11-20T21:00:00Z")
        #expect(timeline.status == 0, "\(timeline.stderr)")
        #expect(timeline.stdout.contains(#""entries":[]"#), "\(timeline.stdout)")
        let limit = try cli("activities", "--db", db, "--limit", "0")
        #expect(limit.status == 2, "\(limit.stderr)")
        #expect(limit.stderr.contains("--limit"), "\(limit.stderr)")
        #expect(try cli("activities", "--db", db, "--limit", "1000").status == 0)
    }

    @Test("every command's error line starts with the program's name, verify, digest and stats included")
    func errorLinesNameTheProgram() throws {
        let missing = directory.file("missing.sqlite")
        for command in ["verify", "digest", "stats", "state"] {
            let arguments = command == "state" ? [command, "R1", "--db", missing] : [command, "--db", missing]
            let runner = try #require(CommandRunner("activity-ledger"))
            let result = try runner.run(arguments)
            #expect(result.status != 0, "\(command)")
            #expect(result.stderr.hasPrefix("activity-ledger: "), "\(command): \(result.stderr)")
        }
        #expect(try cli("import", "-", "--db", db, input: QueryTests.ride).status == 0)
        let tampered = try cli("verify", "--db", db, "--digest", "1:" + String(repeating: "0", count: 64))
        #expect(tampered.status == 2)
        #expect(tampered.stderr.hasPrefix("activity-ledger: "), "\(tampered.stderr)")
    }

    @Test("revoking a key id that does not exist is not found (exit 1), not a usage error")
    func revokeUnknownKeyIsNotFound() throws {
        // Listing or revoking at a path with no ledger makes none (found by a probe: `keys list` created one).
        for command in [["keys", "list"], ["keys", "revoke", "nope"]] {
            let missing = try cli(command + ["--db", db])
            #expect(missing.status == 1 && missing.stderr.contains("no ledger at"), "\(command): \(missing.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: db))
        #expect(try cli("import", "-", "--db", db, input: QueryTests.ride).status == 0)
        let revoke = try cli("keys", "revoke", "nope", "--db", db)
        #expect(revoke.status == 1, "\(revoke.stderr)")
        #expect(revoke.stderr.contains("nope"), "\(revoke.stderr)")
    }

    /// Found in session 33: `keys create` left the whole new ledger in a 400 KB `-wal` beside a 4 KiB file (the keys
    /// commands did not close what they opened, as every other command does).
    @Test("keys create, list and revoke leave the file whole: no -wal with frames beside it")
    func keysCommandsFoldTheirWAL() throws {
        let wal = db + "-wal"
        func walBytes() -> Int { ((try? FileManager.default.attributesOfItem(atPath: wal))?[.size] as? Int) ?? 0 }
        let created = try cli("keys", "create", "--app", "com.example.rides", "--scope", "read", "--db", db, "--json")
        #expect(created.status == 0, "\(created.stderr)")
        #expect(walBytes() == 0, "keys create left \(walBytes()) bytes of WAL")
        let id = try #require(
            (try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: Any])?["id"] as? String)
        #expect(try cli("keys", "list", "--db", db).status == 0)
        #expect(walBytes() == 0, "keys list left \(walBytes()) bytes of WAL")
        #expect(try cli("keys", "revoke", id, "--db", db).status == 0)
        #expect(walBytes() == 0, "keys revoke left \(walBytes()) bytes of WAL")
        // The revocation is in the file itself.
        #expect(try cli("keys", "list", "--db", db).stdout.contains("revoked"))
    }

    @Test("verify with a malformed --digest is bad input (exit 2); a good digest still verifies")
    func malformedDigestExitsTwo() throws {
        #expect(try cli("import", "-", "--db", db, input: QueryTests.ride).status == 0)
        let bad = try cli("verify", "--db", db, "--digest", "junk")
        #expect(bad.status == 2, "\(bad.stderr)")
        #expect(bad.stderr.contains("--digest"), "\(bad.stderr)")
        let digest = try cli("digest", "--db", db).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try cli("verify", "--db", db, "--digest", digest).status == 0)
    }

    @Test("serve refuses a reader map size out of range, from the option or its environment variable (exit 2)")
    func readerMapOutOfRange() throws {
        #expect(try cli("import", "-", "--db", db, input: QueryTests.ride).status == 0)
        let binary = try #require(CommandRunner("activity-ledger")).executable
        for (arguments, environment, named) in [
            (["--reader-map-mib", "-1"], "LEDGER_PORT=0", "--reader-map-mib"),
            (["--reader-map-mib", "65537"], "LEDGER_PORT=0", "--reader-map-mib"),
            ([], "LEDGER_READER_MAP_MIB=lots", "LEDGER_READER_MAP_MIB"),
        ] {
            // Under `timeout`, so that a serve that wrongly starts ends the test instead of holding it.
            let runner = CommandRunner(
                executable: binary, launcher: URL(fileURLWithPath: "/usr/bin/timeout"), prefix: ["20", "env", environment])
            let result = try runner.run(["serve", "--db", db, "--port", "0"] + arguments)
            #expect(result.status == 2, "\(arguments) \(environment): \(result.stderr)")
            #expect(result.stderr.contains(named), "\(result.stderr)")
        }
    }

    @Test("every command's --help has an example, the reconcile and keys groups' included")
    func everyHelpHasAnExample() throws {
        let commands: [[String]] = [
            ["serve"], ["import"], ["export"], ["state"], ["timeline"], ["audit"], ["replay"], ["activities"],
            ["reconcile"], ["reconcile", "resync"], ["reconcile", "nightly"], ["verify"], ["digest"], ["rebuild"],
            ["stats"], ["keys"], ["keys", "create"], ["keys", "list"], ["keys", "revoke"],
        ]
        let runner = try #require(CommandRunner("activity-ledger"))
        for command in commands {
            let help = try runner.run(command + ["--help"])
            #expect(help.status == 0, "\(command)")
            #expect(help.stdout.contains("Example:"), "\(command) --help has no example")
        }
    }
}
