import ArgumentParser
import Foundation
import LedgerTesting

/// Writes the seeded corpus as JSON Lines, for `activity-ledger import`, `make run`'s demo data and CLI timings.
struct CorpusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "corpus", abstract: "Write a seeded corpus of realistic Live Activity events as JSON Lines.")

    @Option(help: "Number of activities.") var activities = 1_000
    @Option(help: "Events per activity.") var eventsPerActivity = 20
    @Option(help: "Seed of the generator.") var seed: UInt64 = 1
    @Option(help: "Output file (default: standard output).") var out: String?

    func run() throws {
        let corpus = CorpusGenerator(seed: seed, activities: activities, eventsPerActivity: eventsPerActivity)
        let handle: FileHandle
        if let out {
            FileManager.default.createFile(atPath: out, contents: nil)
            handle = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        } else {
            handle = .standardOutput
        }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 20)
        for line in corpus.lines() {
            buffer.append(contentsOf: line.utf8)
            buffer.append(0x0A)
            if buffer.count >= 1 << 20 {
                handle.write(Data(buffer))
                buffer.removeAll(keepingCapacity: true)
            }
        }
        handle.write(Data(buffer))
    }
}
