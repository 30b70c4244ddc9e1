import ActivityModel
import ArgumentParser
import Ledger

struct Activities: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "activities",
        abstract: "List activities by phase, installation, attributes type, token or channel.",
        discussion: """
            Phases are evaluated as of --at (default now), exactly as `state` would.

            Example:
              activity-ledger activities --phase stale --json
              activity-ledger activities --token 80f1c2… --at 2026-11-20T21:14:00Z
            """
    )

    @OptionGroup var options: GlobalOptions
    @OptionGroup var namespace: AppOption

    @Option(help: "pending, active, stale, ended or dismissed.")
    var phase: String?

    @Option(help: "Activities of this installation.")
    var installation: String?

    @Option(name: .customLong("attributes-type"), help: "Activities of this ActivityAttributes type.")
    var attributesType: String?

    @Option(help: "Activities that ever had this push token.")
    var token: String?

    @Option(help: "Activities that ever had a push token starting with these hex digits.")
    var tokenPrefix: String?

    @Option(help: "Activities subscribed to this broadcast channel.")
    var channel: String?

    @Option(parsing: .unconditional, help: "Evaluate phases as of this time (default now).")
    var at: String?

    @Option(help: "At most this many (1…1000).")
    var limit: Int = 100

    @Option(help: "Continue after a previous page: its nextCursor, as printed.")
    var after: String?

    func run() async throws {
        try await runReporting(db: options.db) {
            guard (1...1000).contains(limit) else {
                throw LedgerError(.badInput, "--limit: expected 1…1000, got \(limit)", field: "limit")
            }
            let phase = try phase.map { text in
                guard let phase = Phase(rawValue: text) else {
                    throw LedgerError(.badInput, "--phase: expected pending, active, stale, ended or dismissed, got \"\(text)\"", field: "phase")
                }
                return phase
            }
            let ledger = try await options.openLedger(readOnly: true)
            let page = try await ledger.activities(ActivityFilter(
                phase: phase, installation: installation, attributesType: attributesType, token: token, tokenPrefix: tokenPrefix,
                channel: channel, app: namespace.app, at: try at.map { try parseTime($0, option: "at") }, limit: limit, after: after
            ))
            if options.json {
                printJSON(page.json)
            } else {
                print(ActivitiesText.render(page))
            }
        }
    }
}
