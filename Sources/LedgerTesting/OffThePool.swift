import Foundation

/// Runs blocking work (waiting for a process, long synchronous SQLite reads) on a thread of its own, so it
/// does not hold one of the few cooperative threads that every other test running in parallel needs.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
