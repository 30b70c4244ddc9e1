internal import Foundation

/// Dedicated threads for ledger calls that block on SQLite (GRDB's synchronous reads, a long verify,
/// a nightly run), so that they never occupy Swift's cooperative pool — one thread per core, two on the
/// target machine, which every HTTP handler needs too. Used as a task executor preference: the work, and
/// anything it awaits that is not actor-isolated, runs on these threads.
///
/// The executors are process-wide and their threads live as long as the process (like NIO's
/// `NIOThreadPool.singleton`): a server has one ledger, and tests open many adapters over the same lanes.
final class BlockingExecutor: TaskExecutor, @unchecked Sendable {
    /// Queries, verify, digest, reconciliation. Fewer threads than GRDB's 5 reader connections, so that
    /// an append's ownership check always finds a free reader however many slow reads are queued.
    static let reads = BlockingExecutor(name: "ledger-reads", threads: 3)

    let name: String
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var head = 0

    init(name: String, threads: Int) {
        self.name = name
        for index in 0..<max(1, threads) {
            let thread = Thread { [self] in self.work() }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Runs `operation` on this executor's threads.
    func run<T: Sendable>(_ operation: () async throws -> T) async throws -> T {
        try await withTaskExecutorPreference(self) {
            // The preference applies from the task's next enqueue; hop now so that the first blocking call
            // already runs here and not on the cooperative thread that called us.
            await Task.yield()
            return try await operation()
        }
    }

    private func work() {
        while true {
            condition.lock()
            while head == jobs.count { condition.wait() }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024 {
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
