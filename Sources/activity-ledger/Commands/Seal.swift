import ActivityModel
import ArgumentParser
import Ledger
import LedgerStore

struct Seal: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seal",
        abstract: "Seal every event not sealed yet into compressed segments.",
        discussion: """
            Older events move from one row each into segments: each stream's events of a range of positions \
            compressed together with the ledger's trained dictionary. Every query answers the same before and \
            after; digests taken before still verify. `serve` seals in the background; this command seals \
            everything now, a segment at a time, while other processes keep reading and appending.

            Example:
              activity-ledger seal --db ledger.sqlite
            """)

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await runReporting(db: options.db) {
            let ledger = try await options.openLedger()
            let progress = Progress("sealing")
            let report = try await ledger.seal { done, total in progress.update(done, of: total) }
            progress.finish()
            if options.json {
                printJSON(report.json)
            } else {
                print("sealed \(report.events) events into \(report.segments) segments (\(report.rowPayloadBytes) row payload bytes → \(report.sealedBytes) sealed bytes); sealed through position \(report.sealedThrough); the longest write transaction took \(Int((report.longestWriteSeconds * 1000).rounded())) ms")
            }
        }
    }
}
