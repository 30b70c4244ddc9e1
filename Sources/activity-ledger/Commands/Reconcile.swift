import APNsProxy
import ActivityModel
import ArgumentParser
import Foundation
import Ledger

struct Reconcile: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconcile",
        abstract: "Compare the ledger with a device snapshot (resync) or the server's truth (nightly).",
        discussion: """
            Example:
              activity-ledger reconcile resync --snapshot snapshot.json --db ledger.sqlite
              activity-ledger reconcile nightly --truth truth.jsonl --run-id 2026-11-21 --db ledger.sqlite --json
            """,
        subcommands: [ReconcileResync.self, ReconcileNightly.self]
    )
}

struct ReconcileResync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resync",
        abstract: "Plan a foreground resync for an installation's snapshot, and record it.",
        discussion: """
            The snapshot is {installation, at, activities: [{activity, attributesType, activityState,
            contentTimestamp, contentHash, pushToken}]}; it is evaluated as of its `at`. The snapshot is recorded as
            device observations and the plan as reconcile events; re-sending the same snapshot changes nothing and
            prints the same plan.

            Example:
              activity-ledger reconcile resync --snapshot snapshot.json --json
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(help: "The snapshot JSON file, or - for standard input.")
    var snapshot: String

    @Option(help: "Only this app's activities (as an API key's app would).")
    var app: String?

    @OptionGroup(title: "Sending the plan to APNs") var apns: APNsSendOptions

    func validate() throws { try checkApp(app) }

    func run() async throws {
        try await runReporting(db: options.db) {
            let bytes: Data
            if snapshot == "-" {
                bytes = FileHandle.standardInput.readDataToEndOfFile()
            } else {
                guard let data = FileManager.default.contents(atPath: snapshot) else {
                    throw LedgerError(.badInput, "cannot read \(snapshot)", field: "snapshot")
                }
                bytes = data
            }
            let parsed = try DeviceSnapshot(json: [UInt8](bytes))
            let ledger = try await options.openLedger()
            let sender = try apns.sender(ledger: ledger, app: app)
            let plan = try await ledger.resync(snapshot: parsed, app: app)
            var executed: [APNsSendOutcome]?
            if let sender {
                var actions: [APNsAction] = []
                for action in plan.actions {
                    guard let payload = action.payload else { continue }
                    let token = try? await ledger.state(activity: action.activity, at: parsed.at, app: app).token
                    actions.append(APNsAction(activity: action.activity, action: action.action, payload: payload, token: token ?? nil))
                }
                executed = try await sender.execute(actions, run: "resync:\(parsed.installation):\(parsed.at.rfc3339)") {
                    if options.json { printJSON(plan.json) } else { print(ReconcileText.render(plan, at: parsed.at)) }
                }
            }
            if options.json {
                printJSON(executed.map { ExecutedText.json(plan.json, $0) } ?? plan.json)
            } else {
                print(ReconcileText.render(plan, at: parsed.at))
                if let executed { print(ExecutedText.render(executed)) }
            }
        }
    }
}

struct ReconcileNightly: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nightly",
        abstract: "Reconcile every activity against the app server's truth feed, and record the run.",
        discussion: """
            The truth feed is JSON Lines {activity, state, done, at}. Findings per activity, the first that applies:
            leaked, expired, deadToken, drift, undelivered; truth items with no activity are missing. Phases are
            evaluated as of --at (default now). Lines that do not parse are listed and skipped, or with --strict
            stop the run before anything is recorded (exit 2). Re-running a run id prints the recorded report.

            Example:
              activity-ledger reconcile nightly --truth truth.jsonl --run-id 2026-11-21 --actions actions.jsonl
              app-server-dump | activity-ledger reconcile nightly --truth - --run-id 2026-11-21 --json
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(help: "The truth feed (JSON Lines), or - for standard input.")
    var truth: String

    @Option(name: .customLong("run-id"), help: "The run's id; re-running it changes nothing.")
    var runID: String

    @Option(parsing: .unconditional, help: "RFC 3339 time or Unix seconds to evaluate phases at (default now).")
    var at: String?

    @Option(
        help: """
            Write the actions as JSON Lines (one APNs-ready action per line) to this file (replaced whole; a device, \
            FIFO or /dev/fd/N is written in place), or - for standard output (the report then goes to stderr).
            """)
    var actions: String?

    @Flag(help: "Stop before recording anything when a truth line does not parse.")
    var strict = false

    @Option(help: "Only this app's activities (as an API key's app would).")
    var app: String?

    @OptionGroup(title: "Sending the actions to APNs") var apns: APNsSendOptions

    func validate() throws { try checkApp(app) }

    func run() async throws {
        try await runReporting(db: options.db) {
            let asOf = try at.map { try parseTime($0, option: "at") } ?? Ledger.now()
            let target = try actions.map { try OutputTarget.resolve($0, option: "actions", ledger: options.db) }
            // With the actions on standard output, the report goes to stderr.
            let printBytes = { (bytes: [UInt8]) in
                let handle = target?.kind == .standardOutput ? FileHandle.standardError : FileHandle.standardOutput
                handle.write(Data(bytes + [0x0A]))
            }
            let printReport = { (text: String) in printBytes(Array(text.utf8)) }
            let ledger = try await options.openLedger()
            let sender = try apns.sender(ledger: ledger, app: app)
            let reader = truth == "-" ? JSONLinesReader.standardInput() : try JSONLinesReader(path: truth)
            let progress = Progress("reconciling")
            let report = try await ledger.nightly(truth: reader, runID: runID, at: asOf, strict: strict, app: app) {
                step in progress.update(step.done, of: 0, unit: step.phase == .readingTruth ? " truth bytes" : " activities")
            }
            progress.finish()
            if let target, report.status != .stopped {
                let sink = try OutputSink(target)
                for entry in report.entries where entry.action.action != .none {
                    try sink.writeLine(entry.json.compactBytes)
                }
                try sink.commit()
            }
            var executed: [APNsSendOutcome]?
            if let sender, report.status != .stopped {
                var actions: [APNsAction] = []
                for entry in report.entries {
                    guard let payload = entry.action.payload else { continue }
                    var token = entry.token
                    if token == nil, entry.channel == nil {
                        token = (try? await ledger.state(activity: entry.activity, at: asOf, app: app).token) ?? nil
                    }
                    actions.append(APNsAction(activity: entry.activity, action: entry.action.action, payload: payload, token: token))
                }
                executed = try await sender.execute(actions, run: "nightly:\(runID)") {
                    options.json ? printBytes(report.compactBytes) : printReport(ReconcileText.render(report))
                }
            }
            if options.json {
                if let executed {
                    printReport(jsonText(ExecutedText.json(report.json, executed)))
                } else {
                    printBytes(report.compactBytes)  // an entry at a time: the report's whole tree took ~1 KB a finding
                }
            } else {
                printReport(ReconcileText.render(report))
                if let executed { printReport(ExecutedText.render(executed)) }
            }
            if report.status == .stopped {
                let first = report.invalidLines.first.map { "line \($0.line): \($0.reason)" } ?? ""
                throw LedgerError(
                    .badInput, "--strict: \(report.invalidLineCount) truth line(s) do not parse, nothing recorded; \(first)")
            }
        }
    }
}
