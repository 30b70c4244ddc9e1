import ArgumentParser

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "export", abstract: "Not built yet.")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        throw ValidationError("'export' is not built yet")
    }
}
