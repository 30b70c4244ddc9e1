import ArgumentParser

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Not built yet.")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        throw ValidationError("'serve' is not built yet")
    }
}
