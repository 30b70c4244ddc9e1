import Foundation
import LedgerPostgres
import LedgerStore
import LedgerTesting
import PostgresNIO
import Testing

/// `activity-ledger copy`, `verify`, `digest` and `export` with `--db postgresql://…`, through the real binary and a
/// real PostgreSQL server (`make test`'s throwaway cluster).
@Suite("copy between a file and PostgreSQL, and the log commands on PostgreSQL", .enabled(if: Backend.all.contains(.postgres)))
struct CopyCommandTests {
    let cli = try! #require(CommandRunner("activity-ledger"))

    @Test("file → PostgreSQL → file keeps every position, time, id and hash: same digest, same export, same answers")
    func roundTrip() async throws {
        let directory = TemporaryDirectory(prefix: "copy")
        let corpus = directory.file("corpus.jsonl")
        // Two apps' namespaces and the app-less one, so names qualified by an app cross the copy too.
        let lines = CorpusGenerator(seed: 21, activities: 60, eventsPerActivity: 15).lines().joined(separator: "\n") + "\n"
        try lines.write(toFile: corpus, atomically: true, encoding: .utf8)
        let original = directory.file("original.sqlite")
        try expectSuccess(cli.run(["import", corpus, "--db", original]))
        try expectSuccess(cli.run(["import", corpus, "--db", original, "--app", "com.example.rides"]))
        let database = try await TestDatabase.create()
        defer { Task { try? await database.drop() } }

        try expectSuccess(cli.run(["copy", "--from", original, "--to", database.url]))
        let restored = directory.file("restored.sqlite")
        let back = try cli.run(["copy", "--from", database.url, "--to", restored, "--json"])
        try expectSuccess(back)

        let digests = try [original, database.url, restored].map { db in
            let result = try cli.run(["digest", "--db", db])
            try expectSuccess(result)
            return result.stdout
        }
        #expect(digests[0].hasPrefix("1800:"))
        #expect(Set(digests).count == 1, "digests differ: \(digests)")
        #expect(back.stdout.contains("\"digest\":\"\(digests[0].trimmingCharacters(in: .whitespacesAndNewlines))\""))

        let verified = try cli.run(["verify", "--db", database.url, "--digest", digests[0].trimmingCharacters(in: .newlines)])
        try expectSuccess(verified)
        #expect(verified.stdout.hasPrefix("ok: 1800 events verified"))

        for app in [[], ["--app", "com.example.rides"]] {
            let exports = try [original, database.url].map { db in try cli.run(["export", "--db", db] + app).stdout }
            #expect(exports[0].split(separator: "\n").count == 900)
            #expect(exports[0] == exports[1], "export differs on PostgreSQL for \(app)")
        }

        // The file restored from PostgreSQL answers the queries with the same bytes as the original.
        let activity = try #require(lines.split(separator: "\n").first.flatMap { line -> String? in
            guard let range = line.range(of: #""stream":"activity:"#) else { return nil }
            return String(line[range.upperBound...].prefix { $0 != "\"" })
        })
        for query in [["state", activity], ["audit", activity], ["activities"], ["timeline", activity]] {
            let answers = try [original, restored].map { db in
                try cli.run(query + ["--db", db, "--json", "--app", "com.example.rides"] + (query[0] == "timeline" ? [] : ["--at", "2030-01-01T00:00:00Z"])).stdout
            }
            #expect(!answers[0].isEmpty && answers[0] == answers[1], "\(query[0]) differs after the round trip")
        }
    }

    @Test("verify on PostgreSQL names the first position whose row was changed, deleted, or whose head was moved")
    func tamperedRows() async throws {
        let database = try await TestDatabase.create()
        defer { Task { try? await database.drop() } }
        let directory = TemporaryDirectory(prefix: "tamper")
        let corpus = directory.file("corpus.jsonl")
        try (CorpusGenerator(seed: 5, activities: 10, eventsPerActivity: 10).lines().joined(separator: "\n") + "\n")
            .write(toFile: corpus, atomically: true, encoding: .utf8)
        let file = directory.file("ledger.sqlite")
        try expectSuccess(cli.run(["import", corpus, "--db", file]))
        try expectSuccess(cli.run(["copy", "--from", file, "--to", database.url]))
        try expectSuccess(cli.run(["verify", "--db", database.url]))

        let cases: [(String, Int64)] = [
            // One byte of one payload.
            ("UPDATE events SET payload = overlay(payload placing '\\x20'::bytea from 2 for 1) WHERE position = 37", 37),
            // A row's time.
            ("UPDATE events SET at = at + 1 WHERE position = 12", 12),
            // A row taken out of the middle.
            ("DELETE FROM events WHERE position = 50", 50),
        ]
        for (damage, position) in cases {
            let copy = try await TestDatabase.create()
            try expectSuccess(cli.run(["copy", "--from", file, "--to", copy.url]))
            try await TestDatabase.admin(copy.url) { client in _ = try await client.query(PostgresQuery(unsafeSQL: damage)) }
            let result = try cli.run(["verify", "--db", copy.url, "--json"])
            #expect(result.status == 2, "\(damage): \(result.stdout)")
            #expect(result.stdout.contains("\"firstBadPosition\":\(position)"), "\(damage): \(result.stdout)")
            try await copy.drop()
        }
    }

    @Test("an event written into the database by hand that no door would take is refused by copy, which leaves no file")
    func copyValidates() async throws {
        let database = try await TestDatabase.create()
        defer { Task { try? await database.drop() } }
        let directory = TemporaryDirectory(prefix: "copy-validate")
        let corpus = directory.file("corpus.jsonl")
        try (CorpusGenerator(seed: 9, activities: 5, eventsPerActivity: 6).lines().joined(separator: "\n") + "\n")
            .write(toFile: corpus, atomically: true, encoding: .utf8)
        let file = directory.file("ledger.sqlite")
        try expectSuccess(cli.run(["import", corpus, "--db", file]))
        try expectSuccess(cli.run(["copy", "--from", file, "--to", database.url]))
        // A row appended behind the ledger's back, through the log alone: its chain is valid, its payload is not an event.
        let log = try await PostgresEventLog(url: database.url, logger: quiet)
        _ = try await log.append(AppendBatch(events: [NewEvent(
            id: "forged", stream: "activity:X", type: "update", at: 1_000, recordedAt: 2_000, payload: Array(#"{"not":"an event"}"#.utf8))]))
        await log.close()
        let restored = directory.file("restored.sqlite")
        let refused = try cli.run(["copy", "--from", database.url, "--to", restored])
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("--from") && refused.stderr.contains("position 31"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: restored))
    }

    @Test("bad URLs, an unreachable server, a foreign database and a non-empty destination are refused in one line")
    func refusals() async throws {
        let database = try await TestDatabase.create()
        defer { Task { try? await database.drop() } }
        let bad = try cli.run(["digest", "--db", "postgresql://u@127.0.0.1:5432/db?sslmode=maybe"])
        #expect(bad.status == 2 && bad.stderr.contains("--db") && bad.stderr.contains("sslmode"), "\(bad.stderr)")
        // A port nothing listens on (1, privileged): a storage failure naming the URL, never its password.
        let port = 1
        let down = try cli.run(["digest", "--db", "postgresql://ledger:s3cret@127.0.0.1:\(port)/ledger"])
        #expect(down.status == 4, "\(down.stderr)")
        #expect(down.stderr.contains("postgresql://ledger@127.0.0.1:\(port)/ledger") && !down.stderr.contains("s3cret"))
        #expect(down.stderr.split(separator: "\n").count == 1)

        // A database with tables of its own is never adopted, and reading commands do not create a schema.
        let empty = try cli.run(["digest", "--db", database.url])
        #expect(empty.status == 4 && empty.stderr.contains("not a ledger"), "\(empty.stderr)")
        // `keys list` and `keys revoke` too: they created the whole schema in an empty database.
        for keys in [["keys", "list"], ["keys", "revoke", "k_x"]] {
            let refused = try cli.run(keys + ["--db", database.url])
            #expect(refused.status == 4 && refused.stderr.contains("not a ledger"), "\(keys): \(refused.stderr)")
        }
        let stillEmpty = try cli.run(["digest", "--db", database.url])
        #expect(stillEmpty.status == 4 && stillEmpty.stderr.contains("not a ledger"), "\(stillEmpty.stderr)")
        try await TestDatabase.admin(database.url) { client in _ = try await client.query("CREATE TABLE theirs (x int)") }
        let directory = TemporaryDirectory(prefix: "refuse")
        let file = directory.file("ledger.sqlite")
        try "".write(toFile: directory.file("empty.jsonl"), atomically: true, encoding: .utf8)
        try expectSuccess(cli.run(["import", directory.file("empty.jsonl"), "--db", file]))
        let foreign = try cli.run(["copy", "--from", file, "--to", database.url])
        #expect(foreign.status == 4 && foreign.stderr.contains("not a ledger"), "\(foreign.stderr)")
        // Named as the destination's failure, not prefixed with the source's path (it read as the file's fault).
        #expect(foreign.stderr.hasPrefix("activity-ledger: --to postgresql://"), "\(foreign.stderr)")
        #expect(!foreign.stderr.contains(file), "\(foreign.stderr)")
        let unreachable = try cli.run(["copy", "--from", file, "--to", "postgresql://ledger:s3cret@127.0.0.1:1/ledger"])
        #expect(unreachable.status == 4 && unreachable.stderr.hasPrefix("activity-ledger: --to postgresql://ledger@127.0.0.1:1/ledger"), "\(unreachable.stderr)")
        #expect(!unreachable.stderr.contains(file) && !unreachable.stderr.contains("s3cret"), "\(unreachable.stderr)")

        // Every command refuses it the same way, reading ones too (and none writes to it).
        let state = try cli.run(["state", "X", "--db", database.url])
        #expect(state.status == 4 && state.stderr.contains("not a ledger"), "\(state.stderr)")
        // A destination file that exists, and the same ledger twice.
        let exists = try cli.run(["copy", "--from", file, "--to", file])
        #expect(exists.status == 2 && exists.stderr.contains("--to"), "\(exists.stderr)")
    }

    private func expectSuccess(_ result: CommandRunner.Result, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(result.status == 0, "exit \(result.status): \(result.stderr)", sourceLocation: sourceLocation)
        if result.status != 0 { throw CommandFailed() }
    }

    struct CommandFailed: Error {}
}
