import ArgumentParser

struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "keys", abstract: "Not built yet.")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        throw ValidationError("'keys' is not built yet")
    }
}
