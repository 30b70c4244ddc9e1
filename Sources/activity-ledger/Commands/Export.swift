import ArgumentParser
import Foundation
import ActivityModel
import Ledger
import LedgerStore

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write every event as JSON Lines, in position order.",
        discussion: """
            The lines are the interchange format of SPEC §2 (id, stream, type, at, source, data) and re-import
            into an equal log.

            Example:
              activity-ledger export --out backup.jsonl
            """)

    @OptionGroup var options: GlobalOptions
    @OptionGroup var namespace: AppOption

    @Option(name: .long, help: "Output file (default: standard output).")
    var out: String?

    @Option(name: .long, help: "Export only events after this position.")
    var after: Int64 = 0

    func run() async throws {
        try await runReporting(db: options.db) {
            let progress = Progress("exporting")
            var written: Int64 = 0
            var skipped = 0
            let undecodable = { (position: Int64, error: LedgerError) in
                skipped += 1
                printFailure("warning: position \(position) does not decode; skipped: \(error.message)")
            }
            let ledger = try await options.openLedger(readOnly: true)
            let sink = try LineSink(path: out)
            let total = try await ledger.lastPosition()
            try await ledger.exportLines(after: after, app: namespace.app, undecodable: undecodable) { line, _ in
                try sink.write(line)
                written += 1
                if written % 4096 == 0 { progress.update(written, of: total - after) }
                return true
            }
            try sink.close()
            progress.finish()
            if skipped > 0 {
                printFailure("warning: \(skipped) stored events do not decode and were not exported")
            }
            if out != nil {
                if options.json { printJSON(["events": .int(written)]) } else { print("exported \(written) events") }
            }
        }
    }
}

/// Buffered line writer to a file or standard output.
final class LineSink {
    private let handle: FileHandle
    private let ownsHandle: Bool
    private var buffer: [UInt8] = []

    init(path: String?) throws {
        if let path {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw LedgerError(.storage, "cannot create \(path)", field: "out")
            }
            handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            ownsHandle = true
        } else {
            handle = FileHandle.standardOutput
            ownsHandle = false
        }
    }

    func write(_ line: [UInt8]) throws {
        buffer.append(contentsOf: line)
        buffer.append(0x0A)
        if buffer.count >= 1 << 20 { try flush() }
    }

    func close() throws {
        try flush()
        if ownsHandle { try handle.close() }
    }

    private func flush() throws {
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
