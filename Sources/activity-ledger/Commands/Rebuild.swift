import ArgumentParser

struct Rebuild: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rebuild", abstract: "Not built yet.")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        throw ValidationError("'rebuild' is not built yet")
    }
}
