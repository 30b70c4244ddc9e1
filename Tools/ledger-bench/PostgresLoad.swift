import ArgumentParser
import Foundation
import LedgerPostgres
import LedgerStore
import Logging

/// One writer process of the multi-process crash test (Tests/LedgerPostgresTests/ProcessKillTests.swift): appends
/// `--batches` batches of `--batch-size` events to the PostgreSQL log at `--url`, one after the other, with ids
/// `NAME-<batch>-<i>`, on streams shared with the other writers (`activity:shared-<i % 5>`) and on one of its own
/// (`activity:NAME`, every third event).
///
/// After each acknowledged append it writes one line to stdout, with one `write(2)` (no stdio buffer, so a parent
/// reading the pipe has every line acknowledged before a kill -9, and no line it has not):
///
///     ack <batch> <count> <id>@<position> … end
struct PostgresLoad: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "postgres-load",
        abstract: "Append numbered batches to a PostgreSQL log, printing each acknowledged batch (crash-test writer).",
        shouldDisplay: false)

    @Option(help: "The log's PostgreSQL URL.") var url: String
    @Option(help: "The writer's name: letters, digits, '_' (it prefixes the ids and names its stream).") var writer: String
    @Option(help: "Batches to append.") var batches: Int
    @Option(name: .customLong("batch-size"), help: "Events per batch.") var batchSize = 10

    func run() async throws {
        guard !writer.isEmpty, writer.count <= 40,
            writer.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_") })
        else { throw BenchFailure("--writer must be 1…40 ASCII letters, digits or '_', got '\(writer)'") }
        guard batches >= 1 else { throw BenchFailure("--batches must be at least 1, got \(batches)") }
        guard (1...1_000).contains(batchSize) else { throw BenchFailure("--batch-size must be 1…1000, got \(batchSize)") }
        do { _ = try PostgresURL(url) } catch let error as StoreError {
            throw BenchFailure("--url: " + error.message.replacingOccurrences(of: "--db: ", with: ""))
        }
        var logger = Logger(label: "postgres-load")
        logger.logLevel = .error
        let log = try await PostgresEventLog(url: url, maximumConnections: 1, logger: logger)
        do {
            for number in 1...batches {
                let events = (0..<batchSize).map { index in
                    NewEvent(
                        id: "\(writer)-\(number)-\(index)",
                        stream: index % 3 == 2 ? "activity:\(writer)" : "activity:shared-\(index % 5)",
                        type: "update", at: Int64(number) * 1_000 + Int64(index),
                        payload: Array(#"{"writer":"\#(writer)","batch":\#(number),"index":\#(index)}"#.utf8))
                }
                let result = try await log.append(AppendBatch(events: events))
                var line = "ack \(number) \(events.count)"
                for (event, position) in zip(events, result.positions) { line += " \(event.id)@\(position)" }
                FileHandle.standardOutput.write(Data((line + " end\n").utf8))
            }
        } catch {
            await log.close()
            throw error
        }
        await log.close()
    }
}

/// A failure of the bench or of its options, printed as one line (`Error: …`) with a non-zero exit.
struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
