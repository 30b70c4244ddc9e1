import ArgumentParser
import Foundation
import LedgerStore

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write every event as JSON Lines, in position order.")

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "Output file (default: standard output).")
    var out: String?

    @Option(name: .long, help: "Export only events after this position.")
    var after: Int64 = 0

    func run() async throws {
        do {
            let store = try StoreAccess.openReadOnly(options.db)
            let sink = try LineSink(path: out)
            let total = try store.lastPosition()
            let progress = Progress("exporting")
            var written: Int64 = 0
            try store.forEachEvent(after: after) { event in
                try sink.write(ExportLine.line(for: event))
                written += 1
                if written % 4096 == 0 { progress.update(written, of: total - after) }
                return true
            }
            try sink.close()
            progress.finish()
            if out != nil {
                let summary = options.json ? try StoreAccess.json(["events": written]) : "exported \(written) events"
                print(summary)
            }
        } catch {
            throw CommandFailure.exit(error)
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
                throw CommandFailure("cannot create \(path)")
            }
            handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            ownsHandle = true
        } else {
            handle = FileHandle.standardOutput
            ownsHandle = false
        }
    }

    func write(_ line: String) throws {
        buffer.append(contentsOf: line.utf8)
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
