import Dispatch
import Foundation
import LedgerStore
import LedgerTesting
import Logging
import Synchronization
import Testing

@testable import Ledger

/// `LedgerConfiguration.queriesOnCallerThread`: one query of a ledger at a time runs on the asking task's own
/// thread; with it off, or while another runs that way, a query is handed to the ledger's read threads. Real files.
@Suite("Queries on the caller's thread")
struct CallerThreadQueryTests {
    let directory = TemporaryDirectory(prefix: "caller-thread")

    func open(onCallerThread: Bool) throws -> Ledger {
        var configuration = LedgerConfiguration()
        configuration.queriesOnCallerThread = onCallerThread
        return try Ledger(
            path: directory.file("ledger-\(onCallerThread).sqlite"), configuration: configuration,
            logger: Logger(label: "test"))
    }

    /// A thread: its id and its name (the ledger's read threads are `NIOThreadPool`'s, named `TP-#n`).
    struct Place: Equatable, CustomStringConvertible {
        var thread: UInt
        var name: String
        var isReadThread: Bool { name.hasPrefix("TP-#") }
        var description: String { "\(name) (\(thread))" }

        static var current: Place { Place(thread: UInt(pthread_self()), name: Thread.current.name ?? "") }
    }

    /// Where the task was just before it asked (no suspension between) and where its query ran.
    static func places(_ ledger: Ledger, while body: @escaping @Sendable () -> Void = {}) async throws
        -> (asked: Place, ran: Place)
    {
        let asked = Place.current
        let ran = try await ledger.read { _ in
            body()
            return Place.current
        }
        return (asked, ran)
    }

    @Test("on: the query runs on the caller's thread; off (serve): on one of the ledger's read threads")
    func whereQueriesRun() async throws {
        let on = try open(onCallerThread: true)
        let off = try open(onCallerThread: false)
        defer { on.file?.close(); off.file?.close() }
        for _ in 0..<20 {
            let inline = try await Self.places(on)
            #expect(inline.asked == inline.ran && !inline.ran.isReadThread, "\(inline)")
            let handed = try await Self.places(off)
            #expect(handed.ran.isReadThread && !handed.asked.isReadThread, "\(handed)")
        }
    }

    @Test("while one query runs on its caller's thread, another is handed to the read threads, and both answer")
    func oneAtATime() async throws {
        let ledger = try open(onCallerThread: true)
        defer { ledger.file?.close() }
        let entered = Atomic<Bool>(false)
        let release = DispatchSemaphore(value: 0)
        // The first query's task runs on a thread of its own, which the query then blocks: blocking one of the
        // cooperative threads instead could leave a loaded test run without one for minutes.
        let own = OneThreadExecutor(name: "caller-thread-test")
        let first = Task(executorPreference: own) {
            try await Self.places(ledger, while: {
                entered.store(true, ordering: .sequentiallyConsistent)
                _ = release.wait(timeout: .now() + 600)
            })
        }
        for _ in 0..<6000 where !entered.load(ordering: .sequentiallyConsistent) {
            try await Task.sleep(for: .milliseconds(10))
        }
        let started = entered.load(ordering: .sequentiallyConsistent)
        try #require(started, "the first query never started")
        let second = try await Self.places(ledger)
        release.signal()
        let inline = try await first.value
        #expect(inline.asked == inline.ran && !inline.ran.isReadThread, "the first ran where it asked: \(inline)")
        #expect(second.ran.isReadThread, "the second was handed off while the first held the caller's slot: \(second)")
        // The slot is free again.
        let after = try await Self.places(ledger)
        #expect(after.asked == after.ran && !after.ran.isReadThread, "\(after)")
    }
}

/// A task executor with one thread of its own, for a task that must block its thread. The thread keeps the executor
/// (and itself) alive for the rest of the test process.
final class OneThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    init(name: String) {
        let thread = Thread { [self] in
            while true {
                condition.lock()
                while jobs.isEmpty { condition.wait() }
                let job = jobs.removeFirst()
                condition.unlock()
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }
}
