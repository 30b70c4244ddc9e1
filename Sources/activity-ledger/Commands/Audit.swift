import ArgumentParser

struct Audit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "audit", abstract: "Not built yet.")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        throw ValidationError("'audit' is not built yet")
    }
}
