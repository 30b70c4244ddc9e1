import ActivityModel
import Foundation
import LedgerTesting
import Testing

/// SPEC §6 "readers never block and never fail because another process writes": while `activity-ledger seal`
/// runs, other processes read (export, state, verify) and import, each through the real binary.
@Suite("Other processes while sealing")
struct SealConcurrencyTests {
    @Test("readers in other processes answer the same bytes during a seal, and an import beside it loses nothing")
    func readersAndImporterBesideSeal() throws {
        let bench = try SealBench("seal-concurrent")
        let events: Int64 = 20_000
        let corpus = try bench.corpus("corpus.jsonl", seed: 45, activities: 1_000, eventsPerActivity: 20)
        let file = try bench.ledger("ledger.sqlite", importing: corpus)
        // New events for another app, imported during the seal; a file holding only them is what to expect.
        let extra = try bench.corpus("extra.jsonl", seed: 46, activities: 50, eventsPerActivity: 20, start: 1_764_000_000_000)
        let app = "com.example.new"
        let alone = try bench.ledger("alone.sqlite", importing: extra, app: app)
        let expectedExtra = try bench.cli("export", "--db", alone, "--app", app)
        #expect(expectedExtra.status == 0 && expectedExtra.stdout.split(separator: "\n").count == 1_000)

        let activities = Array(Set(CorpusGenerator(seed: 45, activities: 1_000, eventsPerActivity: 20).prefix(400).map(\.stream)))
            .sorted().prefix(3).map { String($0.dropFirst("activity:".count)) }
        #expect(activities.count == 3)
        let at = "1763780400"  // a day after the corpus began: every event is in the past
        let digest = try bench.digest(file)
        // What each reader answered before the seal.
        let readers: [(name: String, arguments: [String])] =
            [("export", ["export", "--db", file]), ("verify", ["verify", "--db", file, "--digest", digest, "--json"])]
            + activities.map { ("state-\($0)", ["state", $0, "--db", file, "--at", at, "--json"]) }
            + activities.map { ("audit-\($0)", ["audit", $0, "--db", file, "--at", at, "--json"]) }
        var before: [String: Data] = [:]
        for reader in readers {
            let result = try bench.start("before-\(reader.name)", reader.arguments).finish()
            #expect(result.status == 0, "\(reader.name): \(result.stderr)")
            before[reader.name] = result.stdout
        }
        #expect((before["export"]?.count ?? 0) > 1_000_000)

        // A wave of every reader at once as the seal starts, another as the import starts once the first segment
        // is committed, then more while either still runs.
        struct Wave {
            var readers: [RunningCommand]
            var segments: Int
            var beside: String
        }
        let watcher = try SegmentWatcher(file)
        let seal = try bench.start("seal", ["seal", "--db", file, "--json", "--busy-timeout", "60"])
        func wave(_ beside: String) throws -> Wave {
            let segments = (try? watcher.segments()) ?? 0
            let tag = "\(beside)-\(segments)-\(UUID().uuidString.prefix(4))"
            return Wave(readers: try readers.map { try bench.start("\(tag)-\($0.name)", $0.arguments) }, segments: segments, beside: beside)
        }
        var waves = [try wave("seal")]
        watcher.wait(until: 1, while: seal)
        #expect(seal.isRunning, "the seal ended before the import could start beside it")
        let importer = try bench.start(
            "import", ["import", extra, "--db", file, "--app", app, "--json", "--busy-timeout", "60"])
        waves.append(try wave("seal and import"))
        var straddled = 0
        var index = 0
        while index < waves.count {
            for (reader, process) in zip(readers, waves[index].readers) {
                let result = try process.finish()
                #expect(result.status == 0, "\(waves[index].beside) \(reader.name): \(result.stderr)")
                // (A Bool: on a failure, #expect would diff megabytes of output.)
                let same = result.stdout == before[reader.name]
                #expect(same, "\(waves[index].beside) \(reader.name) answered differently")
            }
            if (try? watcher.segments()) ?? 0 > waves[index].segments { straddled += 1 }
            if seal.isRunning || importer.isRunning { waves.append(try wave(seal.isRunning ? "seal" : "import")) }
            index += 1
        }
        try watcher.close()
        let sealed = try seal.finish()
        #expect(sealed.status == 0, "seal: \(sealed.stderr)")
        let imported = try importer.finish()
        #expect(imported.status == 0, "import: \(imported.stderr)")
        #expect(String(decoding: imported.stdout, as: UTF8.self).contains(#""appended":1000"#))
        // Readers ran while segments were committed.
        #expect(straddled >= 1, "no wave of readers saw a segment committed while it ran (\(waves.count) waves)")

        // Nothing was lost or changed; sealing again seals what the import added and changes nothing either.
        for pass in ["after", "sealed again"] {
            let verify = try bench.cli("verify", "--db", file, "--json")
            #expect(verify.status == 0 && verify.stdout.contains(#""ok":true"#), "\(pass): \(verify.stdout)")
            #expect(verify.stdout.contains(#""checked":\#(events + 1_000),"#), "\(pass): \(verify.stdout)")
            #expect(try bench.cli("verify", "--db", file, "--digest", digest).status == 0, "\(pass)")
            #expect(try bench.stats(file).events == events + 1_000, "\(pass)")
            let exported = try bench.cli("export", "--db", file)
            let same = Data(exported.stdout.utf8) == before["export"]
            #expect(exported.status == 0 && same, "\(pass): export differs")
            let exportedExtra = try bench.cli("export", "--db", file, "--app", app)
            let sameExtra = exportedExtra.stdout == expectedExtra.stdout
            #expect(sameExtra, "\(pass): the imported events differ")
            if pass == "after" {
                let again = try bench.cli("seal", "--db", file, "--json")
                #expect(again.status == 0, "seal again: \(again.stderr)")
                let stats = try bench.stats(file)
                #expect(stats.sealed == events + 1_000 && stats.unsealed == 0, "\(stats)")
            }
        }
    }
}
