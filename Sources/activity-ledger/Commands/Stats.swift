import ActivityModel
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
            let stats = try options.openStore(
                for: "stats", why: "it counts sealed segments and compression; on PostgreSQL ask the database (pg_total_relation_size)"
            ).stats()
            if options.json {
                printJSON(stats.json)
                return
            }
            print("events:            \(stats.events)")
            print("sealed:            \(stats.sealedEvents) in \(stats.segments) segments (\(stats.sealedBytes) bytes)")
            print("unsealed:          \(stats.unsealedEvents)")
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

extension StoreStats {
    /// `stats --json`: `{"events", "streams", "fileBytes", "bytesPerEvent", "payloadBytes", "storedPayloadBytes",
    /// "sealedEvents", "unsealedEvents", "segments", "sealedBytes", "compressionRatio", "dictionaries": [{"id", "bytes", "firstPosition"}]}`, written by ActivityModel's writer.
    var json: JSONValue {
        .object([
            "events": .int(events), "streams": .int(streams), "fileBytes": .int(fileBytes),
            "bytesPerEvent": .double((bytesPerEvent * 10).rounded() / 10), "payloadBytes": .int(payloadBytes),
            "storedPayloadBytes": .int(storedPayloadBytes),
            "sealedEvents": .int(sealedEvents), "unsealedEvents": .int(unsealedEvents), "segments": .int(segments),
            "sealedBytes": .int(sealedBytes),
            "compressionRatio": .double((compressionRatio * 100).rounded() / 100),
            "dictionaries": .array(dictionaries.map { dictionary in
                .object([
                    "id": .int(dictionary.id), "bytes": .int(Int64(dictionary.bytes)),
                    "firstPosition": .int(dictionary.firstPosition),
                ])
            }),
        ])
    }
}
