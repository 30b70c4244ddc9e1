import ActivityModel
import ArgumentParser
import Foundation
import Ledger
import LedgerWeb

struct Report: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write an activity's incident view as one self-contained HTML file (to attach to a ticket).",
        discussion: """
            The file holds the page, its script and the data (timeline, verdicts, token history and the Lock Screen
            card at every moment it changes); it opens from disk with no server and no network, and its slider
            works offline. It is the view `serve` gives at /activities/<id>. The window defaults to the activity's
            request through a little past its last event or its removal, whichever is later (not after now).

            Example:
              activity-ledger report RIDE-8812 --from 2026-11-20T21:00:00Z --to 2026-11-20T22:00:00Z --out ride.html
            """
    )

    @OptionGroup var options: GlobalOptions
    @OptionGroup var namespace: AppOption

    @Argument(help: "The activity id.")
    var activity: String

    /// Defaults: from the activity's request to a little past its last event or its removal, not after now.
    @OptionGroup var window: WindowOptions

    @Option(
        help: """
            The HTML file to write (replaced whole, or left as it was on failure; a device, FIFO or /dev/fd/N is \
            written in place); - for standard output.
            """)
    var out: String

    func run() async throws {
        try await runReporting(db: options.db) {
            let (from, to) = try window.parsed()
            let target = try OutputTarget.resolve(out, option: "out", ledger: options.db)
            let ledger = try await options.openLedger(readOnly: true)
            let report = try await ledger.incident(activity: activity, from: from, to: to, app: namespace.app)
            let html = IncidentPage.report(report)
            let sink = try OutputSink(target)
            try sink.write(html)
            try sink.commit()
            // With the page on standard output, the summary goes to stderr (JSON too: stdout is the page).
            if target.kind == .standardOutput {
                FileHandle.standardError.write(Data(
                    "wrote \(activity): \(report.timeline.entries.count) events, \(report.cards.count) moments\n".utf8))
            } else if options.json {
                printJSON(.object([
                    "activity": .string(activity), "out": .string(out), "bytes": .int(Int64(html.count)),
                    "events": .int(Int64(report.timeline.entries.count)), "cards": .int(Int64(report.cards.count)),
                ]))
            } else {
                print(
                    "wrote \(out): \(activity), \(report.timeline.entries.count) events, \(report.cards.count) moments, "
                        + "\(html.count) bytes")
            }
        }
    }
}
