import ArgumentParser
import Foundation

@main
struct ActivityLedgerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "activity-ledger",
        abstract: "An event-sourced, tamper-evident ledger of iOS Live Activities.",
        discussion: """
            Every command takes --db PATH (default ./ledger.sqlite), prints readable text by default \
            and JSON with --json, and exits non-zero with a one-line reason on bad input.
            """,
        subcommands: [
            Serve.self, Import.self, Export.self, State.self, Timeline.self, Audit.self, Replay.self,
            Activities.self, Reconcile.self, Verify.self, Digest.self, Rebuild.self, Stats.self, Keys.self, Backup.self,
            Migrate.self, Seal.self, Report.self, Copy.self,
        ]
    )

    /// ArgumentParser's own main, except that a usage error (a missing, unknown or invalid option) is bad
    /// input like any other: one line naming the option and exit 2 (the README's exit codes), not its 64.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
            let help = helpCommandName(for: error)
            printFailure("\(message(for: error)) (see '\(help) --help')")
            Foundation.exit(Exit.badInput)
        }
    }

    /// `activity-ledger <subcommand>` of the arguments, for the hint to its help.
    private static func helpCommandName(for error: any Error) -> String {
        let arguments = CommandLine.arguments.dropFirst()
        var names = ["activity-ledger"]
        var level: [any ParsableCommand.Type] = configuration.subcommands
        for argument in arguments {
            guard let sub = level.first(where: { $0._commandName == argument }) else { break }
            names.append(argument)
            level = sub.configuration.subcommands
        }
        return names.joined(separator: " ")
    }
}
