import Foundation
import GRDB

/// Holds SQLite's write lock on a file (`BEGIN IMMEDIATE`) from a connection of its own, as another process's
/// writer would, for a while.
public final class WriteLockHolder: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    /// Takes the lock and returns once it is held; it is released after `seconds`, or at `release()` if sooner.
    public init(path: String, seconds: Double) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        let locked = DispatchSemaphore(value: 0)
        Thread { [done, released] in
            var signalled = false
            do {
                try queue.inDatabase { db in
                    try db.execute(sql: "BEGIN IMMEDIATE")
                    signalled = true
                    locked.signal()
                    _ = released.wait(timeout: .now() + seconds)
                    try db.execute(sql: "COMMIT")
                }
            } catch {
                if !signalled { locked.signal() }
            }
            try? queue.close()
            done.signal()
        }.start()
        locked.wait()
    }

    /// Ends the hold now (a test that needs the lock held until it has seen something, however slow the
    /// machine, holds it long and releases it).
    public func release() { released.signal() }

    /// Returns once the lock is released.
    public func waitUntilReleased() { done.wait() }
}
