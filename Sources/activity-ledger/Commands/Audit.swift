import ActivityModel
import ArgumentParser
import Ledger

struct Audit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Delivery verdicts: which updates reached which activity, with the evidence.",
        discussion: """
            Example:
              activity-ledger audit RIDE-8812
              activity-ledger audit --update 7f1c2d4e-0000-4000-8000-000000000001 --json
            """
    )

    @OptionGroup var options: GlobalOptions
    @OptionGroup var namespace: AppOption

    @Argument(help: "The activity id.")
    var activity: String?

    @Option(help: "Audit one update or end (by event id) on every activity it reached.")
    var update: String?

    @Option(parsing: .unconditional, help: "Evaluate as of this time (default now).")
    var at: String?

    func validate() throws {
        if (activity == nil) == (update == nil) {
            throw ValidationError("give either an activity or --update <event-id>")
        }
    }

    func run() async throws {
        try await runReporting(db: options.db) {
            let ledger = try await options.openLedger(readOnly: true)
            let asOf = try at.map { try parseTime($0, option: "at") }
            if let update {
                let audit = try await ledger.audit(update: update, at: asOf, app: namespace.app)
                if options.json { printJSON(audit.json) } else { print(AuditText.render(audit.deliveries, title: "update \(update)")) }
            } else if let activity {
                let audit = try await ledger.audit(activity: activity, at: asOf, app: namespace.app)
                if options.json { printJSON(audit.json) } else { print(AuditText.render(audit.deliveries, title: activity)) }
            }
        }
    }
}
