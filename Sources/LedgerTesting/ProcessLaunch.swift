import Foundation

/// Starts child processes one at a time.
///
/// swift-corelibs-foundation's `Process.run()` on Linux adds a close action for every descriptor up to the highest
/// open one (it emulates `POSIX_SPAWN_CLOEXEC_DEFAULT`). The HTTP suites hold ~1,400 descriptors at their peak
/// (live servers and their clients), and with several tests launching processes at once the test process crashed
/// inside `Process.run()` (SIGSEGV in memcpy, seen once in `make test`). A process-wide lock around the launch
/// (not the wait) takes the concurrency out of it for a few milliseconds per launch.
public enum ProcessLaunch {
    private static let lock = NSLock()

    /// `process.run()`, with no other launch of this test process at the same time.
    public static func start(_ process: Process) throws {
        lock.lock()
        defer { lock.unlock() }
        try process.run()
    }
}
