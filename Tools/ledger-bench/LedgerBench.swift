import ArgumentParser

@main
struct LedgerBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger-bench",
        abstract: "Measures SPEC §8 figures beside a plain-SQLite raw-JSON baseline.",
        subcommands: [AllBenchmarks.self, StoreBenchmark.self, LedgerBenchmark.self, NightlyBenchmarkCommand.self, MemoryBenchmark.self, CrashWriter.self, CorpusCommand.self, ZstdProbe.self, ScanProbe.self, HTTPBenchmark.self, BareServer.self, FakeAPNs.self, APNsProxyBenchmark.self, PostgresBenchmark.self, PostgresLoad.self],
        defaultSubcommand: AllBenchmarks.self
    )
}
