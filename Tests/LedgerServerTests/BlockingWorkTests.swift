import Foundation
import LedgerServer
import LedgerTesting
import Synchronization
import Testing

@Suite("Blocking ledger work stays off the cooperative threads")
struct BlockingWorkTests {
    @Test("appends are acknowledged while slow verifies run on more threads than the machine has cores")
    func appendDuringVerify() async throws {
        let service = try TestService()
        let lines = Array(CorpusGenerator(seed: 11, activities: 1_200, eventsPerActivity: 25).lines())
        for start in stride(from: 0, to: lines.count, by: 5_000) {
            try await service.temporary.append(lines[start..<min(lines.count, start + 5_000)].joined(separator: "\n"))
        }
        // Enough verifies to block every cooperative thread if they ran there (the old behaviour).
        let verifies = ProcessInfo.processInfo.activeProcessorCount + 2
        let progress = Progress()
        try await service.test { client async throws in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<verifies {
                    group.addTask {
                        let reply = try await client.get("/v1/verify", key: service.admin)
                        #expect(reply.status == 200, "\(reply.text)")
                        progress.firstVerifyDone.withLock { $0 = $0 ?? .now }
                    }
                }
                group.addTask {
                    // Appends one event after another until the first verify is over, counting those acknowledged
                    // before it; were verifies to block the cooperative threads, none could be.
                    var index = 0
                    while progress.firstVerifyDone.withLock({ $0 }) == nil {
                        index += 1
                        let reply = try await client.post(
                            "/v1/events", key: service.ingest, Sample.request("DURING-\(index)", id: "during-\(index)"))
                        #expect(reply.status == 200, "\(reply.text)")
                        if progress.firstVerifyDone.withLock({ $0 }) == nil { progress.appendsBeforeIt.withLock { $0 += 1 } }
                        try await Task.sleep(for: .milliseconds(20))
                    }
                }
                try await group.waitForAll()
            }
        }
        #expect(progress.appendsBeforeIt.withLock { $0 } >= 1)
    }

    final class Progress: Sendable {
        let firstVerifyDone = Mutex<ContinuousClock.Instant?>(nil)
        let appendsBeforeIt = Mutex(0)
    }
}
