import ActivityModel
import ArgumentParser
import Foundation
import Ledger
import LedgerPostgres
import LedgerStore

struct Copy: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy a whole ledger between backends (SQLite file ↔ PostgreSQL), keeping positions, times, ids and hashes.",
        discussion: """
            The destination must hold no event (a new file, or an empty database: its schema is created). Each event
            keeps its position, stream, version, id, type, times and payload; the destination recomputes the chain,
            and the copy ends by verifying it against the source's digest, so `digest` prints the same on both.
            A file destination gets its projections as the events arrive. A source written meanwhile is copied up to
            its digest when the copy began.

            The log is what is copied (the destination's projections are built from it): API keys and nightly
            reconciliation reports stay in the source; create keys on the destination with `keys create`.

            Examples:
              activity-ledger copy --from ledger.sqlite --to postgresql://ledger@db.internal/ledger
              activity-ledger copy --from postgresql://ledger@db.internal/ledger --to restored.sqlite
            """)

    @Option(help: "The ledger to copy: a file path or a postgresql:// URL.")
    var from: String

    @Option(help: "Where to copy it: a new file path, or a postgresql:// URL of an empty database.")
    var to: String

    @Flag(name: .long, help: "Print JSON instead of readable text.")
    var json = false

    func run() async throws {
        try await runReporting(db: from) {
            let source = LedgerLocation(from)
            let destination = LedgerLocation(to)
            if source == destination {
                throw LedgerError(.badInput, "--to names the same ledger as --from", field: "to")
            }
            if case .sqlite(let path) = destination {
                try OutputTarget.newFile(path, option: "to", ledger: from)
            }
            let busyTimeout = Duration.seconds(5)
            let progress = Progress("copying")
            let report = try await StoreAccess.withLog(source, readOnly: true, busyTimeout: busyTimeout, option: "from") { from in
                try await StoreAccess.withLog(destination, readOnly: false, busyTimeout: busyTimeout, option: "to") { into in
                    let held = try await into.lastPosition()
                    guard held == 0 else {
                        throw LedgerError(
                            .badInput, "--to \(into.location) already holds \(held) events: copy needs an empty ledger",
                            field: "to")
                    }
                    do {
                        // The one event validator (the codec every door decodes with), in the event's own app.
                        return try await EventLogCopy.copy(from: from, to: into, validate: { event in
                            do {
                                _ = try Ledger.exportLine(event, app: Namespaced.app(event.stream))
                            } catch let error as LedgerError {
                                throw LedgerError(
                                    .badInput, "--from: position \(event.position) is not an event any door takes: \(error.message)",
                                    field: "from")
                            }
                        }) { done, total in progress.update(done, of: total) }
                    } catch {
                        // A new file the copy made is removed, so a refused copy leaves nothing behind; a database
                        // keeps the events before the refused one (say so).
                        if case .sqlite(let path) = destination {
                            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
                        } else if let refusal = error as? LedgerError, refusal.code == .badInput {
                            throw LedgerError(
                                .badInput, refusal.message + " (\(into.location) keeps the events copied before it: drop them before copying again)",
                                field: "from")
                        }
                        throw error
                    }
                }
            }
            progress.finish()
            // The copy holds the log; its projections are built from it now, so that reading commands (which never
            // write) answer from it at once.
            var configuration = LedgerConfiguration()
            configuration.store.busyTimeout = busyTimeout
            await (try Ledger.open(destination, configuration: configuration, logger: StoreAccess.quietLogger)).close()
            if json {
                printJSON(["events": .int(report.events), "digest": .string(report.digest.description)])
            } else {
                print("copied \(report.events) events; digest \(report.digest) verified on the copy")
            }
        }
    }
}
