import ArgumentParser

struct Digest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "digest", abstract: "Not built yet.")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        throw ValidationError("'digest' is not built yet")
    }
}
