import ArgumentParser

/// Options every command shares.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "Path of the ledger file.")
    var db: String = "./ledger.sqlite"

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
}
