import ArgumentParser
import Foundation
import Ledger
import LedgerStore

struct Digest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "digest",
        abstract: "Print the last position and its chain hash (POSITION:HEX).",
        discussion: """
            Keep the digest; `verify --digest D` later proves the log up to it is unchanged.

            Example:
              activity-ledger digest --db ledger.sqlite > digest.txt
            """)

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await runReporting(db: options.db) {
            let digest = try await options.withLog { try await $0.digest() }
            if options.json {
                printJSON(digest.json)
            } else {
                print(digest.description)
            }
        }
    }
}
