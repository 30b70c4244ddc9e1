import ArgumentParser
import Foundation
import LedgerStore

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Events, streams, file bytes, bytes per event, compression ratio and dictionaries.",
        discussion: """
            Example:
              activity-ledger stats --db ledger.sqlite --json
            """)

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await runReporting(db: options.db) {
            let stats = try options.openStore().stats()
            if options.json {
                print(try StoreAccess.json(StatsJSON(stats)))
                return
            }
            print("events:            \(stats.events)")
            print("streams:           \(stats.streams)")
            print("file bytes:        \(stats.fileBytes)")
            print(String(format: "bytes/event:       %.1f", stats.bytesPerEvent))
            print("payload bytes:     \(stats.payloadBytes) raw, \(stats.storedPayloadBytes) stored")
            print(String(format: "compression ratio: %.2fx", stats.compressionRatio))
            print("dictionaries:      \(stats.dictionaries.count)")
            for dictionary in stats.dictionaries {
                print("  #\(dictionary.id): \(dictionary.bytes) bytes, from position \(dictionary.firstPosition)")
            }
        }
    }
}

struct StatsJSON: Encodable {
    struct Dictionary: Encodable {
        var id: Int64
        var bytes: Int
        var firstPosition: Int64
    }

    var events: Int64
    var streams: Int64
    var fileBytes: Int64
    var bytesPerEvent: Double
    var payloadBytes: Int64
    var storedPayloadBytes: Int64
    var compressionRatio: Double
    var dictionaries: [Dictionary]

    init(_ stats: StoreStats) {
        events = stats.events
        streams = stats.streams
        fileBytes = stats.fileBytes
        bytesPerEvent = (stats.bytesPerEvent * 10).rounded() / 10
        payloadBytes = stats.payloadBytes
        storedPayloadBytes = stats.storedPayloadBytes
        compressionRatio = (stats.compressionRatio * 100).rounded() / 100
        dictionaries = stats.dictionaries.map { .init(id: $0.id, bytes: $0.bytes, firstPosition: $0.firstPosition) }
    }
}
