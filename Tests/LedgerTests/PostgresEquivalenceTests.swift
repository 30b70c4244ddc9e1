import ActivityModel
import Foundation
@testable import Ledger
import LedgerPostgres
import LedgerStore
import LedgerTesting
import Logging
import Testing

/// SPEC §6 "Scale-out": everything in §2–§7 behaves identically on both backends. The generated ledger of
/// `SealingEquivalenceTests` (two apps and the app-less namespace, channels, pushes, ends, dismissals, token
/// rotations) is built in a file and on PostgreSQL, and every question of `Probe` — state at many times,
/// timelines, audits of activities and of updates, every page of every list, the feed in pages, events by id,
/// verify (also up to earlier digests), digest, export, replay into a file, the projections and their rebuild,
/// resync and nightly (which append) — is asked of both and compared byte for byte.
///
/// Two databases: one filled by `copy` from the file (the same chain, so every answer must match, hashes and
/// recorded times included; its projections are built by the catch-up a writing open does), and one filled by
/// the same appends as the file, through `Ledger.append` on PostgreSQL (its events carry their own recorded times
/// and so their own hashes: every answer that names neither must match, and its projections — written inside
/// each append's transaction — must equal the file's row for row).
@Suite("A ledger on PostgreSQL answers as one in a file", .enabled(if: TestDatabase.enabled))
struct PostgresEquivalenceTests {
    @Test("every answer of a copied ledger, and every answer of an appended one that names no recorded time, is the file's")
    func everyAnswerIsTheFiles() async throws {
        let directory = TemporaryDirectory(prefix: "postgres-equivalence")
        let file = try SealingEquivalenceTests.open(directory.file("file.sqlite"))
        let total = try await SealingEquivalenceTests.build(file, namingEvents: true)
        #expect(total > 5_000)
        let copied = try await TestDatabase.create()
        let appended = try await TestDatabase.create()
        var ledgers: [Ledger] = []
        do {
            // Copied: the log through `EventLogCopy`, then the projections by a writing open's catch-up.
            let log = try await PostgresEventLog(url: copied.url, logger: TestDatabase.quiet)
            _ = try await EventLogCopy.copy(from: file.store.log, to: log)
            await log.close()
            let copy = try await Ledger.open(.postgres(url: copied.url), logger: TestDatabase.quiet)
            ledgers.append(copy)
            // Appended: the same batches through the ledger.
            let fresh = try await Ledger.open(.postgres(url: appended.url), logger: TestDatabase.quiet)
            ledgers.append(fresh)
            #expect(try await SealingEquivalenceTests.build(fresh, namingEvents: true) == total)
            #expect(try await fresh.projectionDump() == (try await file.projectionDump()))

            let plan = try await Probe.plan(file, boundary: Int64(total / 2))
            let reference = try await Probe(plan: plan, directory: directory, name: "file").run(file)
            reference.expectSubstantial()
            let answers = [
                ("copied", try await Probe(plan: plan, directory: directory, name: "copied").run(copy)),
                ("appended", try await Probe(plan: plan, directory: directory, name: "appended").run(fresh)),
            ]
            for (name, other) in answers {
                #expect(other.labels == reference.labels, "\(name): other questions were asked")
                var differing: [String] = []
                for (label, bytes) in reference.entries where other.bytes[label] != bytes {
                    if name == "appended" && !Self.independentOfRecordedTime(label) { continue }
                    differing.append(label)
                }
                #expect(differing.isEmpty, "\(name) answers differently from the file: \(differing.prefix(12))")
                if let first = differing.first {
                    let mine = String(decoding: other.bytes[first] ?? [], as: UTF8.self)
                    let theirs = String(decoding: reference.bytes[first] ?? [], as: UTF8.self)
                    Issue.record("\(name) \(first):\n\(mine.prefix(600))\nfile:\n\(theirs.prefix(600))")
                }
            }
            // Compared answers of the appended ledger are most of them, not a few.
            let compared = reference.labels.filter(Self.independentOfRecordedTime).count
            #expect(compared > reference.labels.count / 2, "only \(compared) of \(reference.labels.count) compared")
        } catch {
            for ledger in ledgers { await ledger.close() }
            try? await copied.drop()
            try? await appended.drop()
            throw error
        }
        for ledger in ledgers { await ledger.close() }
        try await copied.drop()
        try await appended.drop()
    }

    /// Answers that name no event's recorded time or hash (nor a digest): the same for a ledger whose events were
    /// appended at other moments.
    static func independentOfRecordedTime(_ label: String) -> Bool {
        let named = ["timeline", "feed", "event ", "verify", "digest", "replay", "export"]
        return !named.contains { label.hasPrefix($0) || label.hasPrefix("rebuilt " + $0) }
    }
}
