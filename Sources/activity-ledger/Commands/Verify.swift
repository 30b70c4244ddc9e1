import ArgumentParser
import Foundation
import Ledger
import LedgerStore

struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Recompute the hash chain and name the first bad position.",
        discussion: """
            Exits 0 when the log is intact, 2 when it is not or --digest is malformed, 1 when there is no ledger, 4 when the file cannot be read.

            Example:
              activity-ledger verify --db ledger.sqlite --digest 991:5f0c…
            """)

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "A digest (POSITION:HEX) taken earlier: also prove the log up to it is unchanged (the whole chain is checked either way).")
    var digest: String?

    func run() async throws {
        try await runReporting(db: options.db) {
            var expected: LedgerStore.Digest?
            if let digest {
                guard let parsed = LedgerStore.Digest(digest) else {
                    throw LedgerError(.badInput, "--digest '\(digest)' is not POSITION:HEX (64 hex digits)", field: "digest")
                }
                expected = parsed
            }
            let report: VerifyReport
            if case .postgres = options.location {
                report = try await options.withLog { try await $0.verify(upTo: expected) }
            } else {
                let store = try options.openStore(for: "verify", why: "")
                let progress = Progress("verifying")
                report = try store.verify(upTo: expected) { done, total in progress.update(done, of: total) }
                progress.finish()
            }
            if options.json {
                printJSON(report.json)
            } else if report.ok {
                print("ok: \(report.checked) events verified, digest \(report.lastGood)")
            } else {
                print("FAILED at position \(report.firstBadPosition ?? 0): \(report.reason ?? "unknown")")
                if report.digestProven == true, let expected {
                    // The chain fails after the digest: what it proves still holds.
                    print("the log up to the digest \(expected) is unchanged")
                }
            }
            if !report.ok {
                if !options.json {
                    printFailure("verify failed at position \(report.firstBadPosition ?? 0)")
                }
                throw ExitCode(2)
            }
        }
    }
}
