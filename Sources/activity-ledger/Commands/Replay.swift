import ActivityModel
import ArgumentParser
import Foundation
import Ledger
import LedgerStore

struct Replay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Write a new ledger file holding the log up to a time or a position.",
        discussion: """
            --until T keeps the events with at <= T (event time: what had happened by T); --position N keeps
            positions <= N (what the ledger knew after N appends). Events keep their order, ids and times;
            projections are rebuilt, and `state X --at T` agrees on both files.

            Example:
              activity-ledger replay --until 2026-11-20T21:14:00Z --into incident.sqlite
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(parsing: .unconditional, help: "Keep events whose time is at or before T.")
    var until: String?

    @Option(help: "Keep events at or before this log position (0 or more).")
    var position: Int64?

    @Option(help: "The new ledger file to write (must not exist).")
    var into: String

    func validate() throws {
        if (until == nil) == (position == nil) {
            throw ValidationError("give exactly one of --until T or --position N")
        }
        if let position, position < 0 {
            throw ValidationError("--position must be a position (0 or more), got \(position)")
        }
    }

    func run() async throws {
        try await runReporting(db: options.db) {
            let limit: ReplayLimit = if let position { .position(position) } else { .until(try parseTime(until!, option: "until")) }
            try OutputTarget.newFile(into, option: "into", ledger: options.db)
            let ledger = try await options.openLedger(readOnly: true)
            let progress = Progress("replaying")
            // Written under a temporary name and published whole (`PartialFile`): a failed or interrupted replay
            // leaves nothing at --into, and never removes a file it did not make.
            PartialFile.removeOnSignals()
            let summary = try await OutputTarget.writing("into") {
                try await ledger.replay(limit, into: into) { done, total in progress.update(done, of: total) }
            }
            progress.finish()
            if options.json {
                printJSON(["into": .string(summary.path), "events": .int(summary.events), "lastPosition": .int(summary.lastPosition)])
            } else {
                print("wrote \(summary.events) events to \(summary.path) (last position \(summary.lastPosition))")
            }
        }
    }
}
