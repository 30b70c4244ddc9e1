import ArgumentParser

struct Activities: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "activities", abstract: "Not built yet.")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        throw ValidationError("'activities' is not built yet")
    }
}
