import ArgumentParser
import Foundation
import GRDB
import LedgerStore
import LedgerTesting
import Logging

/// Import, read and size of the event store beside the raw-JSON baseline, on the same generated corpus.
struct StoreBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store", abstract: "Event store vs plain SQLite of raw JSON lines.")

    @Option(help: "Events in the corpus.") var events = 500_000
    @Option(help: "Events per append batch (one durable transaction each).") var batch = 1_000
    @Option(help: "Events per activity stream.") var perActivity = 25
    @Option(help: "full, normal or off.") var durability = "full"
    @Option(help: "Directory for the benchmark files.") var directory = NSTemporaryDirectory()
    @Option(help: "Corpus seed.") var seed: UInt64 = 2026
    @Flag(name: .customLong("ascending-ids"), help: "Replace the corpus's random event ids by ascending UUIDs (measures what random ids cost).")
    var ascendingIDs = false

    func run() async throws {
        guard let level = StoreConfiguration.Durability(rawValue: durability) else {
            throw ValidationError("--durability must be full, normal or off")
        }
        let corpus = CorpusGenerator(seed: seed, activities: max(1, events / perActivity), eventsPerActivity: perActivity)
        print("corpus: \(corpus.count) events, \(corpus.activities) activities, seed \(seed), batch \(batch), synchronous=\(durability)")
        var storeBatches: [AppendBatch] = []
        var lineBatches: [[String]] = []
        var keyedBatches: [[(line: String, keys: RawJSONBaseline.Keys)]] = []
        var pendingKeyed: [(line: String, keys: RawJSONBaseline.Keys)] = []
        var keyAssigner = RawJSONBaseline.KeyAssigner()
        var rawBytes = 0
        var pendingEvents: [NewEvent] = []
        var pendingLines: [String] = []
        for generated in corpus {
            let line = generated.line
            rawBytes += line.utf8.count + 1
            pendingLines.append(line)
            let id = ascendingIDs ? Self.ascendingID(count: storeBatches.count * batch + pendingEvents.count) : generated.id
            pendingEvents.append(NewEvent(
                id: id, stream: generated.stream, type: generated.type, at: generated.at,
                recordedAt: generated.at + 40, payload: generated.payload))
            pendingKeyed.append((String(line.prefix(RawJSONBaseline.leanRowBytes)), keyAssigner.keys(id: id, stream: generated.stream)))
            if pendingEvents.count == batch {
                storeBatches.append(AppendBatch(events: pendingEvents))
                lineBatches.append(pendingLines)
                keyedBatches.append(pendingKeyed)
                pendingEvents.removeAll(keepingCapacity: true)
                pendingLines.removeAll(keepingCapacity: true)
                pendingKeyed.removeAll(keepingCapacity: true)
            }
        }
        if !pendingEvents.isEmpty {
            storeBatches.append(AppendBatch(events: pendingEvents))
            lineBatches.append(pendingLines)
            keyedBatches.append(pendingKeyed)
        }
        let count = corpus.count
        print(String(format: "raw JSON: %.1f bytes/line on average", Double(rawBytes) / Double(count)))

        let storePath = directory + "/bench-store-\(ProcessInfo.processInfo.processIdentifier).sqlite"
        let basePath = directory + "/bench-baseline-\(ProcessInfo.processInfo.processIdentifier).sqlite"
        Measure.removeDatabase(storePath)
        Measure.removeDatabase(basePath)
        defer {
            Measure.removeDatabase(storePath)
            Measure.removeDatabase(basePath)
        }

        // Baseline.
        let baseline = RawJSONBaseline(path: basePath, synchronous: level.rawValue.uppercased())
        let basePool = try baseline.open()
        let baseImport = try await Measure.seconds { try baseline.importBatches(lineBatches, into: basePool) }
        var baseRead = (count: 0, bytes: 0)
        let baseReadSeconds = try await Measure.seconds { baseRead = try baseline.readAll(basePool) }
        try await basePool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        let baseBytes = Measure.fileBytes(basePath)

        // A row per event at its leanest: 128 bytes of each line (about what the store keeps per row besides the
        // keys) with only the two keys SPEC §6 gives every event (unique id; stream + version).
        let keyedPath = directory + "/bench-keyed-\(ProcessInfo.processInfo.processIdentifier).sqlite"
        Measure.removeDatabase(keyedPath)
        defer { Measure.removeDatabase(keyedPath) }
        let keyed = RawJSONBaseline(path: keyedPath, synchronous: level.rawValue.uppercased(), keyed: true)
        let keyedPool = try keyed.open()
        let keyedImport = try await Measure.seconds { try keyed.importKeyedBatches(keyedBatches, into: keyedPool) }
        try await keyedPool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        let keyedBytes = Measure.fileBytes(keyedPath)

        // Store.
        var configuration = StoreConfiguration()
        configuration.durability = level
        let store = try EventStore(path: storePath, configuration: configuration, logger: Logger(label: "bench"))
        let storeImport = try await Measure.seconds {
            for appendBatch in storeBatches { _ = try await store.append(appendBatch) }
        }
        var readCount = 0
        var readBytes = 0
        let storeReadSeconds = try await Measure.seconds {
            try store.forEachEvent(after: 0) { event in
                readCount += 1
                readBytes += event.payload.count
                return true
            }
        }
        var verified = false
        let verifySeconds = try await Measure.seconds { verified = try store.verify().ok }
        try await store.pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        let stats = try store.stats()
        let storeBytes = Measure.fileBytes(storePath)
        guard readCount == count, baseRead.count == count, verified else {
            throw ValidationError("benchmark self-check failed: read \(readCount)/\(baseRead.count) of \(count), verify \(verified)")
        }

        print("")
        print("| measure | store | raw-JSON baseline | store / baseline |")
        print("|---|---:|---:|---:|")
        print(row("import, events/s (durable batches)", Double(count) / storeImport, Double(count) / baseImport))
        print(String(format: "| import, events/s: 128-byte rows + unique id and (stream, version) indexes (a row per event at its leanest) | – | %.0f | %.2f |",
            Double(count) / keyedImport, keyedImport / storeImport))
        print(row("read (+ decompress), events/s", Double(count) / storeReadSeconds, Double(count) / baseReadSeconds))
        print(row("file bytes/event", Double(storeBytes) / Double(count), Double(baseBytes) / Double(count)))
        print(String(format: "| file bytes | %d | %d | baseline / store = %.2fx |", storeBytes, baseBytes,
            Double(baseBytes) / Double(storeBytes)))
        print(String(format: "| file bytes/event: 128-byte rows + both indexes | – | %.1f | |", Double(keyedBytes) / Double(count)))
        print(String(format: "| verify, events/s | %.0f | – | |", Double(count) / verifySeconds))
        print(String(format: "| payload compression | %.2fx (%d dictionaries) | – | |", stats.compressionRatio,
            stats.dictionaries.count))
        print(String(format: "| peak RSS (MiB, includes the in-memory corpus) | %.0f | | |", Measure.peakRSSMiB() ?? -1))
    }

    /// A canonical lower-case UUID whose bytes grow with `count`, so the id index is appended at its end.
    static func ascendingID(count: Int) -> String {
        let hex = String(count, radix: 16)
        let digits = String(repeating: "0", count: 12 - hex.count) + hex
        return "00000000-0000-4000-8000-" + digits
    }

    private func row(_ name: String, _ store: Double, _ base: Double) -> String {
        "| \(name) | " + String(format: "%.0f | %.0f | %.2f |", store, base, store / base)
    }
}
