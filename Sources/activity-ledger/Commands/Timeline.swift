import ActivityModel
import ArgumentParser
import Ledger

struct Timeline: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timeline",
        abstract: "An activity's events in event-time order, with the phase and displayed content after each.",
        discussion: """
            Example:
              activity-ledger timeline RIDE-8812 --from 2026-11-20T21:00:00Z --to 2026-11-20T22:00:00Z
            """
    )

    @OptionGroup var options: GlobalOptions
    @OptionGroup var namespace: AppOption

    @Argument(help: "The activity id.")
    var activity: String

    @Option(help: "List events at or after this time.")
    var from: String?

    @Option(help: "List events at or before this time.")
    var to: String?

    func run() async throws {
        try await runReporting(db: options.db) {
            let from = try from.map { try parseTime($0, option: "from") }
            let to = try to.map { try parseTime($0, option: "to") }
            // As over HTTP: an empty window is a mistake in the options, not an empty timeline.
            if let from, let to, from > to {
                throw LedgerError(.badInput, "--from \(from.rfc3339) is after --to \(to.rfc3339)", field: "from")
            }
            let ledger = try options.openLedger(readOnly: true)
            let timeline = try await ledger.timeline(activity: activity, from: from, to: to, app: namespace.app)
            if options.json {
                printJSON(timeline.json)
            } else {
                print(TimelineText.render(timeline.entries))
            }
        }
    }
}
