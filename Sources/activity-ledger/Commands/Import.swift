import ArgumentParser

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "import", abstract: "Not built yet.")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        throw ValidationError("'import' is not built yet")
    }
}
