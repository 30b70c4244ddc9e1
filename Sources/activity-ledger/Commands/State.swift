import ActivityModel
import ArgumentParser
import Ledger

struct State: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state",
        abstract: "An activity's state as of a time (default now).",
        discussion: """
            Phase, attributes, displayed and intended content, token, counters — folded from the log, so any past
            time is answered exactly. Exits 1 with "no such activity at T" when it had no request by then.

            Example:
              activity-ledger state RIDE-8812 --at 2026-11-20T21:14:00Z --json
            """
    )

    @OptionGroup var options: GlobalOptions
    @OptionGroup var namespace: AppOption

    @Argument(help: "The activity id (without the activity: prefix).")
    var activity: String

    @Option(parsing: .unconditional, help: "RFC 3339 time or Unix seconds (default now).")
    var at: String?

    func run() async throws {
        try await runReporting(db: options.db) {
            let ledger = try await options.openLedger(readOnly: true)
            let asOf = try at.map { try parseTime($0, option: "at") }
            let state = try await ledger.state(activity: activity, at: asOf, app: namespace.app)
            if options.json {
                printJSON(state.json)
            } else {
                print(StateText.render(state))
            }
        }
    }
}
