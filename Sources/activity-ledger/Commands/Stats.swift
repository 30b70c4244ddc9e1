import ArgumentParser

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stats", abstract: "Not built yet.")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        throw ValidationError("'stats' is not built yet")
    }
}
