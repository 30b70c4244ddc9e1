import ArgumentParser
import Foundation
import LedgerStore
import LedgerTesting
import Logging

/// Streams a large generated corpus into a store in durable batches and reports peak RSS (SPEC §8: 10M
/// events within 200 MB).
struct MemoryBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory", abstract: "Peak resident memory while importing a large corpus.")

    @Option(help: "Events to import.") var events = 10_000_000
    @Option(help: "Events per append batch.") var batch = 1_000
    @Option(help: "full, normal or off.") var durability = "full"
    @Option(help: "Directory for the benchmark file.") var directory = NSTemporaryDirectory()

    func run() async throws {
        guard let level = StoreConfiguration.Durability(rawValue: durability) else {
            throw ValidationError("--durability must be full, normal or off")
        }
        let path = directory + "/bench-memory-\(ProcessInfo.processInfo.processIdentifier).sqlite"
        Measure.removeDatabase(path)
        defer { Measure.removeDatabase(path) }
        var configuration = StoreConfiguration()
        configuration.durability = level
        let store = try EventStore(path: path, configuration: configuration, logger: Logger(label: "bench"))
        let corpus = CorpusGenerator(seed: 10, activities: max(1, events / 25), eventsPerActivity: 25)
        var pending: [NewEvent] = []
        var written = 0
        let seconds = try await Measure.seconds {
            for generated in corpus {
                pending.append(NewEvent(
                    id: generated.id, stream: generated.stream, type: generated.type, at: generated.at,
                    payload: generated.payload))
                if pending.count == batch {
                    _ = try await store.append(AppendBatch(events: pending))
                    written += pending.count
                    pending.removeAll(keepingCapacity: true)
                    if written % 1_000_000 == 0 {
                        FileHandle.standardError.write(Data(String(
                            format: "%d events, RSS %.0f MiB\n", written, Measure.currentRSSMiB() ?? -1).utf8))
                    }
                }
            }
            if !pending.isEmpty { _ = try await store.append(AppendBatch(events: pending)) }
        }
        let stats = try store.stats()
        print(String(format: "imported %lld events in %.1f s (%.0f events/s incl. generation), %.1f bytes/event",
            stats.events, seconds, Double(stats.events) / seconds, stats.bytesPerEvent))
        print(String(format: "peak RSS: %.0f MiB", Measure.peakRSSMiB() ?? -1))
    }
}
