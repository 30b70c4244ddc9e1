import ArgumentParser
import Foundation
import LedgerStore
import Logging

/// Appends forever from several tasks and prints `ack POSITION ID` for every acknowledged event; the crash
/// test kills it with SIGKILL and checks every acknowledged event survived.
struct CrashWriter: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash-writer", abstract: "Append in a loop, printing acknowledged positions.",
        shouldDisplay: false)

    @Option(help: "Ledger file.") var db: String
    @Option(help: "Concurrent appenders.") var tasks = 4

    func run() async throws {
        var configuration = StoreConfiguration()
        configuration.firstDictionaryAfter = 500
        configuration.retrainEvery = 2_000
        configuration.dictionarySize = 8_192
        let store = try EventStore(path: db, configuration: configuration, logger: Logger(label: "crash-writer"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var round = 0
                    while true {
                        round += 1
                        let events = (0..<(1 + round % 7)).map { index in
                            NewEvent(
                                id: UUID().uuidString.lowercased(), stream: "activity:crash-\(task)-\(round % 13)",
                                type: "update", at: Int64(round),
                                payload: Array(#"{"task":\#(task),"round":\#(round),"index":\#(index),"pad":"crash-writer"}"#.utf8))
                        }
                        let result = try await store.append(AppendBatch(events: events))
                        var text = ""
                        for (event, position) in zip(events, result.positions) { text += "ack \(position) \(event.id)\n" }
                        FileHandle.standardOutput.write(Data(text.utf8))
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
