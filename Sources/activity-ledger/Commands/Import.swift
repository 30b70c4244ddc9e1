import ActivityModel
import ArgumentParser
import Foundation
import Ledger
import LedgerStore

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Append the events of a JSON Lines file, in order, all or nothing.",
        discussion: """
            Every line is validated (SPEC §2). A refused line stops the import with its line number and reason,
            and nothing of the file is written. Re-sent event ids are no-ops.

            Example:
              activity-ledger import events.jsonl --db ride.sqlite
              cat events.jsonl | activity-ledger import - --json
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "A JSON Lines file, or - for standard input.")
    var file: String

    @Option(help: "The app that owns the imported streams (as an API key's app would).")
    var app: String?

    @Flag(help: """
        Write every event as a row, sealed later by `seal` or `serve`. By default an import into a ledger file \
        with no rows (a new one, or one sealed to its end) writes whole sealed segments as it goes.
        """)
    var rows = false

    func validate() throws { try checkApp(app) }

    func run() async throws {
        // All or nothing, for the file too: a refused import that would have made a new ledger leaves none (it
        // left an empty ledger file behind). Removed after `runReporting` has closed it.
        var created: String?
        if case .sqlite(let path) = options.location, !FileManager.default.fileExists(atPath: path) { created = path }
        do {
            try await importFile()
        } catch {
            if let created {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: created + suffix) }
            }
            throw error
        }
    }

    private func importFile() async throws {
        try await runReporting(db: options.db) {
            let reader = file == "-" ? JSONLinesReader.standardInput() : try JSONLinesReader(path: file)
            let ledger = try await options.openLedger(mustExist: false)
            let total = file == "-" ? nil : (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int64) ?? nil
            let progress = Progress("importing")
            let started = Date()
            let summary = try await ledger.importJSONLines(reader, app: app, sealing: !rows) { step in
                progress.update(step.bytes, of: total ?? 0, unit: " bytes")
            }
            progress.finish()
            let seconds = Date().timeIntervalSince(started)
            if options.json {
                printJSON([
                    "lines": .int(Int64(summary.lines)), "appended": .int(Int64(summary.appended)),
                    "duplicates": .int(Int64(summary.duplicates)), "lastPosition": .int(summary.lastPosition),
                    "seconds": .double(seconds),
                ])
            } else {
                let rate = seconds > 0 ? Int(Double(summary.appended) / seconds) : 0
                print("imported \(summary.appended) events (\(summary.duplicates) duplicates) from \(summary.lines) lines in \(String(format: "%.2f", seconds)) s (\(rate) events/s); last position \(summary.lastPosition)")
            }
        }
    }
}
