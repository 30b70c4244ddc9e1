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

    @OptionGroup var window: WindowOptions

    func run() async throws {
        try await runReporting(db: options.db) {
            let (from, to) = try window.parsed()
            let ledger = try await options.openLedger(readOnly: true)
            let timeline = try await ledger.timeline(activity: activity, from: from, to: to, app: namespace.app)
            if options.json {
                printJSON(timeline.json)
            } else {
                print(TimelineText.render(timeline.entries))
            }
        }
    }
}
