import ActivityModel
import ArgumentParser
import Ledger

struct Rebuild: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rebuild",
        abstract: "Rebuild every projection from the log and swap it in atomically.",
        discussion: """
            Example:
              activity-ledger rebuild --db ledger.sqlite
            """
    )

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await runReporting(db: options.db) {
            let ledger = try await options.openLedger()
            let progress = Progress("rebuilding")
            let summary = try await ledger.rebuild { done, total in progress.update(done, of: total) }
            progress.finish()
            let rate = summary.seconds > 0 ? Int(Double(summary.events) / summary.seconds) : 0
            if options.json {
                printJSON([
                    "events": .int(summary.events), "activities": .int(summary.activities),
                    "seconds": .double(summary.seconds), "eventsPerSecond": .int(Int64(rate)),
                ])
            } else {
                print("rebuilt projections of \(summary.activities) activities from \(summary.events) events in \(summary.seconds) s (\(rate) events/s)")
            }
        }
    }
}
