import Foundation
import GRDB
import LedgerStore
import LedgerTesting
import Logging
import Testing

@Suite("Crash safety")
struct CrashTests {
    /// `ledger-bench` is built next to the test bundle (`swift build --build-tests` builds it).
    private static func benchBinary() -> URL? {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
        ]
        return candidates.map { $0.appendingPathComponent("ledger-bench") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    @Test("after kill -9 under load every acknowledged event is there and verify passes", arguments: [1, 2])
    func killNine(round: Int) async throws {
        let binary = try #require(Self.benchBinary(), "ledger-bench not found next to the test bundle")
        let fixture = try StoreFixture()
        let log = fixture.path + ".acks"
        let process = try ChildProcess(binary, ["crash-writer", "--db", fixture.path], stdout: .file(log))
        // Once it has acknowledged some appends (a loaded machine may take a while to start it), let it write for
        // a random while more, then kill it without warning.
        func acknowledgements() -> Int {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").count
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while acknowledgements() < 20, process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: .milliseconds(Int.random(in: 0...1_100)))
        process.signal(SIGKILL)
        process.waitUntilExit()
        let output = try String(contentsOfFile: log, encoding: .utf8)
        let acknowledged = output.split(separator: "\n").compactMap { line -> (Int64, String)? in
            let parts = line.split(separator: " ")
            // A line cut by the kill is not an acknowledgement we can trust to have been read whole.
            guard parts.count == 3, parts[0] == "ack", let position = Int64(parts[1]), parts[2].count == 36 else {
                return nil
            }
            return (position, String(parts[2]))
        }
        #expect(acknowledged.count > 10, "the writer acknowledged too little to test anything")
        let store = try fixture.reopen()
        try await store.pool.read { (db) throws in
            for (position, id) in acknowledged {
                #expect(try store.event(in: db, id: id)?.position == position)
            }
        }
        let report = try store.verify()
        #expect(report.ok, "\(report.reason ?? "")")
        #expect(report.checked >= acknowledged.map(\.0).max() ?? 0)
        _ = try await store.append(AppendBatch(events: [event("after-crash")]))
        #expect(try store.verify().ok)
    }
}
