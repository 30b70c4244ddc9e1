import ActivityModel
import Foundation
import LedgerTesting
import Testing

/// The CLI as a script would run it: exit codes, one-line reasons naming the line or field, SPEC §7 JSON.
@Suite("activity-ledger CLI")
struct CLITests {
    let directory = TemporaryDirectory()
    var db: String { directory.file("cli.sqlite") }

    func cli(_ arguments: String..., input: String? = nil) throws -> CommandRunner.Result {
        let runner = try #require(CommandRunner("activity-ledger"), "activity-ledger not built next to the tests")
        return try runner.run(arguments, input: input)
    }

    func imported() throws -> String {
        let path = directory.file("ride.jsonl")
        try QueryTests.ride.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try cli("import", path, "--db", db)
        #expect(result.status == 0, "\(result.stderr)")
        return path
    }

    @Test("a refused line exits 2, names the line and field, and writes nothing")
    func refusedImport() throws {
        let path = directory.file("bad.jsonl")
        let bad = QueryTests.ride + "\n" + #"{"stream":"channel:x","type":"dismiss","at":"2026-11-20T21:09:00Z","data":{"by":"user"}}"#
        try bad.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try cli("import", path, "--db", db)
        #expect(result.status == 2)
        #expect(result.stderr.contains("line 6"), "\(result.stderr)")
        #expect(result.stderr.contains("stream"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
        // A new ledger refused whole is not made at all.
        #expect(!FileManager.default.fileExists(atPath: db))
        // An existing one is left as it was.
        #expect(try cli("import", "-", "--db", db, input: "").status == 0)
        #expect(try cli("import", path, "--db", db).status == 2)
        let stats = try cli("stats", "--db", db, "--json")
        #expect(stats.stdout.contains("\"events\":0"), "\(stats.stdout)")
    }

    @Test("import seals whole segments into a new file as it goes; --rows writes rows; both verify to one digest")
    func importSealsUnlessRows() throws {
        let path = directory.file("corpus.jsonl")
        try CorpusGenerator(seed: 40, activities: 50, eventsPerActivity: 100).lines().joined(separator: "\n")
            .write(toFile: path, atomically: true, encoding: .utf8)
        let rows = directory.file("rows.sqlite")
        #expect(try cli("import", path, "--db", db).status == 0)
        #expect(try cli("import", path, "--db", rows, "--rows").status == 0)
        let sealed = try cli("stats", "--db", db, "--json").stdout
        #expect(sealed.contains(#""sealedEvents":4096,"unsealedEvents":904,"#), "\(sealed)")
        let unsealed = try cli("stats", "--db", rows, "--json").stdout
        #expect(unsealed.contains(#""sealedEvents":0,"unsealedEvents":5000,"#), "\(unsealed)")
        for file in [db, rows] { #expect(try cli("verify", "--db", file).status == 0) }
        // The same events (times of arrival aside): the exports differ only in them.
        let exports = try [db, rows].map { try cli("export", "--db", $0).stdout.split(separator: "\n").count }
        #expect(exports == [5_000, 5_000])
    }

    @Test("a NUL in an id or stream is refused with exit 2 naming the line and field; verify stays clean")
    func controlCharactersRefused() throws {
        _ = try imported()
        for (line, field) in [
            (#"{"id":"abc\u0000one","stream":"activity:R1","type":"dismiss","at":1,"data":{"by":"user"}}"#, "id"),
            (#"{"stream":"activity:R1\u0000X","type":"dismiss","at":1,"data":{"by":"user"}}"#, "stream"),
        ] {
            let result = try cli("import", "-", "--db", db, input: QueryTests.ride + "\n" + line)
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.contains("line 6") && result.stderr.contains(field), "\(result.stderr)")
            #expect(result.stderr.contains("no control characters, got U+0000"), "\(result.stderr)")
        }
        let verify = try cli("verify", "--db", db)
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(try cli("stats", "--db", db, "--json").stdout.contains("\"events\":5"))
    }

    @Test("--app works in that app's namespace: an import with --app is invisible without it, and export --app re-imports anywhere")
    func appNamespaces() throws {
        let path = directory.file("ride.jsonl")
        try QueryTests.ride.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try cli("import", path, "--db", db, "--app", "com.a").status == 0)
        #expect(try cli("import", path, "--db", db, "--app", "com.b").status == 0)
        let at = "2026-11-20T21:10:00Z"
        #expect(try cli("state", "R1", "--db", db, "--at", at).status == 1)
        let a = try cli("state", "R1", "--db", db, "--at", at, "--app", "com.a", "--json")
        #expect(a.status == 0, "\(a.stderr)")
        let exported = try cli("export", "--db", db, "--app", "com.b")
        #expect(exported.stdout == QueryTests.ride + "\n" || exported.stdout.split(separator: "\n").count == 5, "\(exported.stdout)")
        #expect(try cli("export", "--db", db).stdout.isEmpty)
        let verify = try cli("verify", "--db", db, "--json")
        #expect(verify.stdout.contains("\"ok\":true"), "\(verify.stdout)")
    }

    @Test("a time option out of range, NaN or infinite exits 2 naming the option (it used to trap)", arguments: [
        "1e300", "-1e300", "nan", "inf", "99999999999999", "1e12",
    ])
    func timeOutOfRange(value: String) throws {
        _ = try imported()
        let result = try cli("state", "R1", "--db", db, "--at", value)
        #expect(result.status == 2, "\(value): \(result.status) \(result.stderr)")
        #expect(result.stderr.contains("--at"), "\(result.stderr)")
    }

    @Test("a time option takes a negative number of Unix seconds as its value (it needed `--at=-1`)")
    func negativeTimeValue() throws {
        _ = try imported()
        let state = try cli("state", "R1", "--db", db, "--at", "-1")
        #expect(state.status == 1, "\(state.stderr)")
        #expect(state.stderr.contains("no such activity at 1969-12-31T23:59:59.000Z"), "\(state.stderr)")
        let timeline = try cli("timeline", "R1", "--db", db, "--from", "-5", "--to", "2026-11-20T21:10:00Z", "--json")
        #expect(timeline.status == 0, "\(timeline.stderr)")
        let into = db + ".before.sqlite"
        let replay = try cli("replay", "--db", db, "--until", "-1", "--into", into)
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(try cli("export", "--db", into).stdout.isEmpty)
    }

    @Test("import from stdin, then state --json has the SPEC §7 shape")
    func stateJSON() throws {
        let result = try cli("import", "-", "--db", db, input: QueryTests.ride)
        #expect(result.status == 0, "\(result.stderr)")
        let state = try cli("state", "R1", "--db", db, "--json", "--at", "2026-11-20T21:10:00Z")
        #expect(state.status == 0, "\(state.stderr)")
        let json = try JSONParser.parse(state.stdout)
        for key in ["activity", "asOf", "phase", "endedBy", "dismissedBy", "attributesType", "attributes", "displayed",
                    "intended", "token", "events", "lastPosition"] {
            #expect(json[key] != nil, "missing \(key)")
        }
        #expect(json["phase"] == "active")
        #expect(json["displayed"]?["timestamp"] == .int(1_795_208_700))
        #expect(json["endedBy"] == .null)
    }

    @Test("state before the request exits 1 with 'no such activity at T'")
    func noSuchActivity() throws {
        _ = try imported()
        let result = try cli("state", "R1", "--db", db, "--at", "1795200000")
        #expect(result.status == 1)
        #expect(result.stderr.contains("no such activity at"), "\(result.stderr)")
    }

    @Test("audit --json gives a verdict per update; timeline prints aligned columns")
    func auditAndTimeline() throws {
        _ = try imported()
        let audit = try JSONParser.parse(try cli("audit", "R1", "--db", db, "--json").stdout)
        #expect(audit["deliveries"]?.arrayValue?.first?["verdict"] == "applied")
        let timeline = try cli("timeline", "R1", "--db", db)
        #expect(timeline.stdout.hasPrefix("POS"), "\(timeline.stdout)")
        #expect(timeline.stdout.split(separator: "\n").count == 6)
    }

    @Test("replay, verify and digest work on the files a user has")
    func replayVerifyDigest() throws {
        _ = try imported()
        let copy = directory.file("copy.sqlite")
        let replay = try cli("replay", "--db", db, "--until", "2026-11-20T21:05:00Z", "--into", copy)
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(try cli("stats", "--db", copy, "--json").stdout.contains("\"events\":3"))
        let digest = try cli("digest", "--db", db).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let verify = try cli("verify", "--db", db, "--digest", String(digest.split(separator: " ").last ?? ""))
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
        let again = try cli("replay", "--db", db, "--position", "2", "--into", copy)
        #expect(again.status == 2, "an existing target file is refused")
    }

    @Test("a bad option value exits non-zero naming the option")
    func badOption() throws {
        _ = try imported()
        let result = try cli("activities", "--db", db, "--phase", "sleeping")
        #expect(result.status == 2)
        #expect(result.stderr.contains("--phase"), "\(result.stderr)")
    }
}
