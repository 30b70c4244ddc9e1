import ArgumentParser

/// Options every command shares.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "Path of the ledger file.")
    var db: String = "./ledger.sqlite"

    @Flag(name: .long, help: "Print JSON instead of readable text.")
    var json = false
}
