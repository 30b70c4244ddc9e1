import ArgumentParser

@main
struct ActivityLedgerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "activity-ledger",
        abstract: "An event-sourced, tamper-evident ledger of iOS Live Activities.",
        discussion: """
            Every command takes --db PATH (default ./ledger.sqlite), prints readable text by default
            and JSON with --json, and exits non-zero with a one-line reason on bad input.
            """,
        subcommands: [
            Serve.self, Import.self, Export.self, State.self, Timeline.self, Audit.self, Replay.self,
            Activities.self, Reconcile.self, Verify.self, Digest.self, Rebuild.self, Stats.self, Keys.self,
        ]
    )
}
