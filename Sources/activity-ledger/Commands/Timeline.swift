import ArgumentParser

struct Timeline: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "timeline", abstract: "Not built yet.")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        throw ValidationError("'timeline' is not built yet")
    }
}
