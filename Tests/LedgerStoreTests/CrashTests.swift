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
        let pipe = Pipe()
        let process = try ChildProcess(
            binary, ["crash-writer", "--db", fixture.path], stdout: .descriptor(pipe.fileHandleForWriting.fileDescriptor))
        try pipe.fileHandleForWriting.close()
        // Let it write for a random while, then kill it without warning.
        try await Task.sleep(for: .milliseconds(Int.random(in: 400...1_500)))
        process.signal(SIGKILL)
        process.waitUntilExit()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
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
