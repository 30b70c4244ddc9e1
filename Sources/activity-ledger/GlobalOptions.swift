import ActivityModel
import ArgumentParser
import Foundation
import Ledger
import LedgerStore

/// Options every command shares.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .customLong("db"),
        help: "The ledger: a file path, or a postgresql://user[:password]@host[:port]/database URL (env LEDGER_DB). [default: ./ledger.sqlite]")
    var dbOption: String?

    /// `--db`, else `LEDGER_DB`, else `./ledger.sqlite`.
    var db: String { dbOption ?? ProcessInfo.processInfo.environment["LEDGER_DB"] ?? "./ledger.sqlite" }

    /// Which backend `db` names.
    var location: LedgerLocation { LedgerLocation(db) }

    @Flag(name: .long, help: "Print JSON instead of readable text.")
    var json = false

    @Option(
        name: .customLong("busy-timeout"),
        help: "Seconds to wait for another process's lock on the file before failing (env LEDGER_BUSY_TIMEOUT). [default: 5]")
    var busyTimeoutSeconds: Double?
}

/// The namespace a command works in (SPEC §2 "Apps are namespaces").
struct AppOption: ParsableArguments {
    @Option(
        name: .long,
        help: "The app (bundle id) whose namespace to use, as an API key of that app sees it; without it, the app-less namespace of plain CLI imports."
    )
    var app: String?

    func validate() throws { try checkApp(app) }
}

/// `--app`'s rule on every command that takes it: the one an API key's app meets (`APIKeyStore.appProblem`: no
/// control character, Unicode NFC), checked before the file is opened, so a refused app reads and writes nothing.
/// An empty app is refused too: leaving `--app` out names the app-less namespace.
func checkApp(_ app: String?) throws {
    guard let app else { return }
    guard !app.isEmpty else {
        throw ValidationError("--app: must not be empty (leave it out for the app-less namespace)")
    }
    if let problem = APIKeyStore.appProblem(app) {
        throw ValidationError(problem.hasPrefix("--app") ? problem : "--app: " + problem)
    }
}

/// `--from T --to T`: a window of event time, bounds inclusive (`timeline`, `report`). A window whose start is
/// after its end is empty (no events, cards or verdicts), as the ledger and HTTP answer it: each bound is valid
/// on its own, and `--json` prints the body `GET …/timeline` sends for the same window.
struct WindowOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "Start of the window: events at or after this time.")
    var from: String?

    @Option(parsing: .unconditional, help: "End of the window: events at or before this time.")
    var to: String?

    /// Both bounds, parsed by the one time rule.
    func parsed() throws -> (from: Instant?, to: Instant?) {
        let from = try from.map { try parseTime($0, option: "from") }
        let to = try to.map { try parseTime($0, option: "to") }
        return (from, to)
    }
}
