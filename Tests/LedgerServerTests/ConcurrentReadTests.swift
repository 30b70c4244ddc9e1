import Foundation
import LedgerServer
import LedgerTesting
import Synchronization
import Testing

/// Many queries at once, each authenticating its key with a synchronous read (no key cache) while the queries'
/// own reads wait for one of the pool's reader connections: every request must be answered. A ledger whose reads
/// held a reader until a cooperative thread came back to release it deadlocked here once every cooperative thread
/// was itself waiting for a reader.
@Suite("Concurrent reads never starve each other")
struct ConcurrentReadTests {
    @Test("200 concurrent state queries with uncached keys are all answered")
    func manyQueriesAtOnce() async throws {
        var configured = try TestService()
        configured.configuration.apiKeyCacheTTL = .zero
        let service = configured
        _ = try await service.temporary.append(
            (0..<20).map { Sample.request("C\($0)", id: "c-\($0)") }.joined(separator: "\n"), app: TestService.app)
        let progress = Progress()
        // A deadlock holds every cooperative thread, so no task could notice it: a thread of its own ends the run.
        Thread {
            Thread.sleep(forTimeInterval: 90)
            guard !progress.finished.withLock({ $0 }) else { return }
            FileHandle.standardError.write(Data(
                "ConcurrentReadTests: deadlock, \(progress.answered.withLock { $0 }) of 200 answered after 90 s\n".utf8))
            exit(1)
        }.start()
        try await service.test { client async throws in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let reply = try await client.get("/v1/activities/C\(index % 20)/state", key: service.read)
                        #expect(reply.status == 200, "\(reply.text)")
                        progress.answered.withLock { $0 += 1 }
                    }
                }
                try await group.waitForAll()
            }
        }
        progress.finished.withLock { $0 = true }
        #expect(progress.answered.withLock { $0 } == 200)
    }

    final class Progress: Sendable {
        let answered = Mutex(0)
        let finished = Mutex(false)
    }
}
