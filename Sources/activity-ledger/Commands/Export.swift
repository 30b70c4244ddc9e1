import ArgumentParser
import Foundation
import ActivityModel
import Ledger
import LedgerStore

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write every event as JSON Lines, in position order.",
        discussion: """
            The lines are the interchange format of SPEC §2 (id, stream, type, at, source, data) and re-import
            into an equal log.

            Example:
              activity-ledger export --out backup.jsonl
            """)

    @OptionGroup var options: GlobalOptions
    @OptionGroup var namespace: AppOption

    @Option(
        name: .long,
        help: """
            Output file, replaced whole (a device, FIFO or /dev/fd/N is written in place); - or none: standard \
            output.
            """)
    var out: String?

    @Option(name: .long, help: "Export only events after this position.")
    var after: Int64 = 0

    func validate() throws {
        guard after >= 0 else { throw ValidationError("--after must be a position (0 or more), got \(after)") }
    }

    func run() async throws {
        try await runReporting(db: options.db) {
            let progress = Progress("exporting")
            var written: Int64 = 0
            var skipped = 0
            let undecodable = { (position: Int64, error: LedgerError) in
                skipped += 1
                printFailure("warning: position \(position) does not decode; skipped: \(error.message)")
            }
            let target = try OutputTarget.resolve(out ?? "-", option: "out", ledger: options.db)
            let ledger = try await options.openLedger(readOnly: true)
            let sink = try OutputSink(target)
            let total = try await ledger.lastPosition()
            try await ledger.exportLines(after: after, app: namespace.app, undecodable: undecodable) { line, _ in
                try sink.writeLine(line)
                written += 1
                if written % 4096 == 0 { progress.update(written, of: total - after) }
                return true
            }
            try sink.commit()
            progress.finish()
            if skipped > 0 {
                printFailure("warning: \(skipped) stored events do not decode and were not exported")
            }
            if target.kind != .standardOutput {
                if options.json { printJSON(["events": .int(written)]) } else { print("exported \(written) events") }
            }
        }
    }
}
