import ActivityModel
import ArgumentParser
import Foundation
import Ledger
import LedgerStore

struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the ledger file consistently while it is being written; the copy is verified.",
        discussion: """
            SQLite's online backup, read inside one read transaction: the copy is the file as of one commit, \
            whatever other processes (serve, import) write meanwhile. The copy is written beside PATH under a \
            temporary name, its hash chain verified and its last hash compared with the source's at the same \
            position, then renamed to PATH. PATH must not exist (exit 2).

            Example:
              activity-ledger backup --db ledger.sqlite --into /backups/ledger-$(date +%F).sqlite
            """)

    @OptionGroup var options: GlobalOptions

    @Option(help: "The new file to write.")
    var into: String

    func run() async throws {
        try await runReporting(db: options.db) {
            try OutputTarget.newFile(into, option: "into", ledger: options.db)
            let store = try options.openStore(
                for: "backup", why: "back up a PostgreSQL ledger with pg_dump, or `copy` it into a file")
            let progress = Progress("backing up")
            PartialFile.removeOnSignals()
            let report = try await OutputTarget.writing("into") {
                try store.backup(into: into) { done, total in
                    progress.update(Int64(done), of: Int64(total), unit: " pages")
                }
            }
            progress.finish()
            if options.json {
                printJSON([
                    "into": .string(into), "position": .int(report.digest.position),
                    "digest": .string(report.digest.description), "verified": .int(report.verified),
                    "bytes": .int(report.bytes),
                ])
            } else {
                print(
                    "backed up \(options.db) to \(into): \(report.digest.position) events, digest \(report.digest) "
                        + "(copy verified, same hash as the source at that position)")
            }
        }
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Upgrade a ledger file written by an older version, so read-only commands can use it.",
        discussion: """
            Applies the schema migrations this version has and the file lacks, and brings the projections up to \
            the log. Every writing command (serve, import, rebuild, reconcile) does the same when it opens a file; \
            read-only commands (state, timeline, audit, activities, export, replay, verify, digest, stats, backup) \
            never write and refuse such a file instead.

            Example:
              activity-ledger migrate --db ledger.sqlite
            """)

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await runReporting(db: options.db) {
            let ledger = try await options.openLedger()
            let last = try await ledger.lastPosition()
            if options.json {
                printJSON(["db": .string(options.db), "events": .int(last)])
            } else {
                print("\(options.db) is up to date (\(last) events)")
            }
        }
    }
}
