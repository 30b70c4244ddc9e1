import ArgumentParser

struct State: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "state", abstract: "Not built yet.")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        throw ValidationError("'state' is not built yet")
    }
}
