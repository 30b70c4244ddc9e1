import ArgumentParser

struct Replay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "replay", abstract: "Not built yet.")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        throw ValidationError("'replay' is not built yet")
    }
}
