import ArgumentParser

struct Reconcile: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "reconcile", abstract: "Not built yet.")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        throw ValidationError("'reconcile' is not built yet")
    }
}
