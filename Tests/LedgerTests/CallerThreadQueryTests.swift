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

    /// The thread a query ran on, and the thread of the task just before it asked (no suspension between).
    static func threads(_ ledger: Ledger) async throws -> (asked: UInt, ran: UInt) {
        let asked = UInt(pthread_self())
        let ran = try await ledger.read { _ in UInt(pthread_self()) }
        return (asked, ran)
    }

    @Test("on: the query runs on the caller's thread; off (serve): on one of the ledger's read threads")
    func whereQueriesRun() async throws {
        let on = try open(onCallerThread: true)
        let off = try open(onCallerThread: false)
        defer { on.file?.close(); off.file?.close() }
        for _ in 0..<20 {
            let inline = try await Self.threads(on)
            #expect(inline.asked == inline.ran)
            let handed = try await Self.threads(off)
            #expect(handed.asked != handed.ran)
        }
    }

    @Test("while one query runs on its caller's thread, another is handed to the read threads, and both answer")
    func oneAtATime() async throws {
        let ledger = try open(onCallerThread: true)
        defer { ledger.file?.close() }
        let entered = Atomic<Bool>(false)
        let release = DispatchSemaphore(value: 0)
        let first = Task {
            try await Self.threads(ledger, while: {
                entered.store(true, ordering: .sequentiallyConsistent)
                _ = release.wait(timeout: .now() + 60)
            })
        }
        // Waits without blocking a thread: the other tests of the run may hold the rest of the cooperative pool.
        for _ in 0..<6000 where !entered.load(ordering: .sequentiallyConsistent) {
            try await Task.sleep(for: .milliseconds(10))
        }
        let started = entered.load(ordering: .sequentiallyConsistent)
        try #require(started, "the first query never started")
        let second = try await Self.threads(ledger)
        release.signal()
        let inline = try await first.value
        #expect(inline.asked == inline.ran, "the first query ran on its caller's thread")
        #expect(second.asked != second.ran, "the second was handed off while the first held the caller's slot")
        // The slot is free again.
        let after = try await Self.threads(ledger)
        #expect(after.asked == after.ran)
    }

    static func threads(_ ledger: Ledger, while body: @escaping @Sendable () -> Void) async throws -> (asked: UInt, ran: UInt) {
        let asked = UInt(pthread_self())
        let ran = try await ledger.read { _ in
            body()
            return UInt(pthread_self())
        }
        return (asked, ran)
    }
}
