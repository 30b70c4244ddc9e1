import ActivityModel
import Foundation
import LedgerTesting
import Testing

/// SPEC §6 "no acknowledged event is lost by a crash at any moment, sealing included": `activity-ledger seal`
/// killed with SIGKILL at many moments of its run, each on a fresh copy of the same ledger.
@Suite("Sealing survives kill -9")
struct SealCrashTests {
    /// Where a round kills: once `segments` segments are committed, after `delay` more milliseconds.
    struct KillPoint: CustomStringConvertible {
        var segments: Int
        var delay: Int
        var description: String { "after \(segments) segments + \(delay) ms" }
    }

    /// An import into a file with no rows seals as it goes, in its one transaction: a kill at any moment leaves the
    /// file as it was (here a log sealed to its end by an earlier import), and the same import then runs whole.
    @Test("after kill -9 at any moment of an import that seals as it goes the file is as before, and the import runs again")
    func killNineWhileImportSeals() throws {
        let bench = try SealBench("import-crash")
        // 28,672 events; the first 8,192 (two whole segments) are imported first, so the file has no rows.
        let corpus = try bench.corpus("corpus.jsonl", seed: 45, activities: 1_792, eventsPerActivity: 16)
        let lines = try String(contentsOfFile: corpus, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 28_672)
        let first = bench.directory.file("first.jsonl")
        try (lines.prefix(8_192).joined(separator: "\n") + "\n").write(toFile: first, atomically: true, encoding: .utf8)
        let pristine = bench.directory.file("pristine.sqlite")
        #expect(try bench.cli("import", first, "--db", pristine).status == 0)
        #expect(try bench.stats(pristine) == (8_192, 8_192, 0))
        let digest = try bench.digest(pristine)

        // How long the whole import takes here, then kills spread over it. A kill that finds the import done
        // shortens the estimate to its delay: the machine can get faster than it was when the import was timed (the
        // tests beside this one end), and kills timed by a slow estimate would all land after the import.
        let timed = try bench.copy(pristine, to: "timed.sqlite")
        let started = Date()
        #expect(try bench.cli("import", corpus, "--db", timed).status == 0)
        var whole = Date().timeIntervalSince(started)
        #expect(try bench.stats(timed) == (28_672, 7 * 4_096, 0))
        var interrupted = 0
        for (round, fraction) in [0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95].enumerated() {
            let file = try bench.copy(pristine, to: "round-\(round).sqlite")
            let importer = try bench.start("import-\(round)", ["import", corpus, "--db", file])
            let delay = whole * fraction
            usleep(UInt32(delay * 1_000_000))
            _ = importer.kill9()
            // All of the import or none of it (a kill after its commit, or an import faster than the one timed,
            // leaves all of it).
            let stats = try bench.stats(file)
            #expect(stats == (8_192, 8_192, 0) || stats == (28_672, 7 * 4_096, 0), "\(fraction): \(stats)")
            if stats.events == 8_192 { interrupted += 1 } else { whole = min(whole, delay) }
            let proved = try bench.cli("verify", "--db", file, "--digest", digest, "--json")
            #expect(
                proved.status == 0 && proved.stdout.contains(#""checked":\#(stats.events),"#),
                "\(fraction): \(proved.stdout) \(proved.stderr)")
            let again = try bench.cli("import", corpus, "--db", file, "--json")
            let appended = 28_672 - stats.events
            #expect(
                again.stdout.contains(#""appended":\#(appended),"duplicates":\#(28_672 - appended),"#),
                "\(fraction): \(again.stdout) \(again.stderr)")
            #expect(try bench.stats(file) == (28_672, 7 * 4_096, 0), "\(fraction)")
            #expect(try bench.cli("verify", "--db", file, "--digest", digest).status == 0, "\(fraction)")
            try? FileManager.default.removeItem(atPath: file)
        }
        #expect(interrupted >= 4, "only \(interrupted) kills interrupted the import")
    }

    @Test("after kill -9 at any moment of seal the file opens, verifies, proves its old digest, exports the same, seals again and finds every id")
    func killNineWhileSealing() throws {
        let bench = try SealBench("seal-crash")
        // 20,000 events: five segments of at most 4096.
        let corpus = try bench.corpus("corpus.jsonl", seed: 44, activities: 1_000, eventsPerActivity: 20)
        let pristine = try bench.ledger("pristine.sqlite", importing: corpus)
        let digest = try bench.digest(pristine)
        let exported = try bench.cli("export", "--db", pristine)
        #expect(exported.status == 0 && exported.stdout.utf8.count > 1_000_000)
        let before = Data(exported.stdout.utf8)
        let events: Int64 = 20_000
        #expect(digest.hasPrefix("\(events):"))

        // How long a segment takes here (a timed seal, from its first commit to its last), so that the delays land
        // inside the next segment on a machine faster or slower than this one was when they were chosen.
        let timed = try bench.copy(pristine, to: "timed.sqlite")
        let timer = try SegmentWatcher(timed)
        let timedSeal = try bench.start("seal-timed", ["seal", "--db", timed])
        timer.wait(until: 1, while: timedSeal)
        let first = ContinuousClock.now
        timer.wait(until: 5, while: timedSeal)
        let segment = max(10, Int((ContinuousClock.now - first) / .milliseconds(1)) / 4)  // milliseconds
        #expect(try timedSeal.finish().status == 0)
        try timer.close()

        // Startup and the first segment's build, then each segment boundary with a delay that lands at random in
        // the next segment's read, compression or write transaction.
        var points = [
            KillPoint(segments: 0, delay: 0), KillPoint(segments: 0, delay: segment / 2),
            KillPoint(segments: 0, delay: segment * 2),
        ]
        for segments in 1...4 {
            points.append(KillPoint(segments: segments, delay: Int.random(in: 0...segment / 6)))
            points.append(KillPoint(segments: segments, delay: Int.random(in: segment / 6...segment * 9 / 10)))
        }
        points.append(KillPoint(segments: 2, delay: Int.random(in: 0...segment)))
        var killedRunning = 0
        var sealedAtKill: Set<Int64> = []
        for (round, point) in points.enumerated() {
            let file = try bench.copy(pristine, to: "round-\(round).sqlite")
            let watcher = try SegmentWatcher(file)
            let seal = try bench.start("seal-\(round)", ["seal", "--db", file])
            watcher.wait(until: point.segments, while: seal)
            usleep(UInt32(point.delay) * 1_000)
            if seal.kill9() { killedRunning += 1 }
            try watcher.close()

            // The file opens read-only after the crash, and everything in it is as before.
            let export = try bench.start("export-\(round)", ["export", "--db", file])
            let verify = try bench.cli("verify", "--db", file, "--json")
            #expect(verify.status == 0 && verify.stdout.contains(#""ok":true"#), "\(point): \(verify.stdout) \(verify.stderr)")
            #expect(verify.stdout.contains(#""checked":\#(events),"#), "\(point): \(verify.stdout)")
            let proved = try bench.cli("verify", "--db", file, "--digest", digest)
            #expect(proved.status == 0, "\(point): \(proved.stdout) \(proved.stderr)")
            let stats = try bench.stats(file)
            #expect(stats.events == events && stats.sealed + stats.unsealed == events, "\(point): \(stats)")
            sealedAtKill.insert(stats.sealed)
            let exportedAfterKill = try export.finish()
            #expect(exportedAfterKill.status == 0, "\(point): \(exportedAfterKill.stderr)")
            // (A Bool: on a failure, #expect would diff megabytes of output.)
            let sameAfterKill = exportedAfterKill.stdout == before
            #expect(sameAfterKill, "\(point): the export after the kill differs")

            // Sealing again finishes the job, and still nothing changed.
            let again = try bench.cli("seal", "--db", file, "--json")
            #expect(again.status == 0 && again.stdout.contains(#""sealedThrough":\#(events)"#), "\(point): \(again.stdout) \(again.stderr)")
            // (Every other round: each export takes a second or more of this test's time.)
            let exportSealed = round % 2 == 0 ? try bench.start("export-sealed-\(round)", ["export", "--db", file]) : nil
            let provedSealed = try bench.cli("verify", "--db", file, "--digest", digest, "--json")
            #expect(provedSealed.status == 0 && provedSealed.stdout.contains(#""ok":true"#), "\(point): \(provedSealed.stdout)")
            let sealedStats = try bench.stats(file)
            #expect(sealedStats.sealed == events && sealedStats.unsealed == 0, "\(point): \(sealedStats)")
            // Every id is still found (a kill between a segment's commit and the filing of its ids lost none):
            // the whole corpus again is all duplicates, and the log did not grow.
            let resent = try bench.cli("import", corpus, "--db", file, "--json")
            #expect(
                resent.status == 0 && resent.stdout.contains(#""appended":0,"duplicates":\#(events),"#),
                "\(point): \(resent.stdout) \(resent.stderr)")
            if let exportedSealed = try exportSealed?.finish() {
                let same = exportedSealed.stdout == before
                #expect(exportedSealed.status == 0 && same, "\(point): the export after sealing again differs")
            }
            try? FileManager.default.removeItem(atPath: file)
        }
        // The kills landed while it worked, at different stages: or the test proved little.
        #expect(killedRunning >= 10, "only \(killedRunning) kills found seal still running")
        #expect(sealedAtKill.count >= 4, "kills left these sealed counts only: \(sealedAtKill.sorted())")
        #expect(sealedAtKill.contains(0) && sealedAtKill.contains { $0 > 0 && $0 < events })
    }
}
