import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child process started with `posix_spawn`, for tests that run the real binaries (CLI runs, `serve`, writers
/// killed with -9, curl, the fake APNs).
///
/// Why not Foundation's `Process`: on Linux, swift-corelibs-foundation's `Process.run()` emulates
/// `POSIX_SPAWN_CLOEXEC_DEFAULT` by listing `/proc/self/fd` and copying each entry's whole 256-byte `d_name` out of
/// `readdir`'s buffer. Entries there are only `d_reclen` (24) bytes long, so the copy of the last entry of a full
/// 32 KiB buffer reads past its end. With ~1,360 descriptors open (the HTTP suites at their peak: live servers and
/// their clients) the read crossed into an unmapped page and the test process died with SIGSEGV in `memcpy` under
/// `Process.run()`, in CI and locally about one run in three — serialising launches did not help, because nothing
/// races. Here the child closes every inherited descriptor from 3 up with one `closefrom` action
/// (glibc ≥ 2.34), and nothing is listed.
///
/// The child gets a process group of its own (as `Process` did: a terminal's Ctrl-C reaches the test runner, which
/// ends its children) and an empty signal mask (the spawning thread's mask, whatever a pool thread blocked, is not
/// the child's business). Its exit is collected with `waitpid` by whoever asks first.
public final class ChildProcess: @unchecked Sendable {
    /// How a child ended.
    public enum Termination: Equatable, Sendable {
        case exited(Int32)
        case signaled(Int32)
    }

    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// This process's own descriptor of the same number.
        case inherit
        /// A descriptor of the caller's, duplicated into the child; the caller still owns (and closes) it.
        case descriptor(Int32)
        /// A file, created or emptied, written from its start.
        case file(String)
    }

    public let processIdentifier: pid_t
    private let lock = NSLock()
    private var ended: Termination?

    /// Starts `executable` with `arguments`; `environment` replaces this process's (nil: inherited);
    /// `directory` is where it starts (nil: here).
    public init(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
        stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null
    ) throws {
        var opened: [Int32] = []
        defer { for descriptor in opened { close(descriptor) } }
        func descriptor(_ stream: Stream, standard: Int32) throws -> Int32? {
            switch stream {
            case .inherit:
                return nil
            case .descriptor(let descriptor):
                return descriptor
            case .null:
                return try open(path: "/dev/null", flags: standard == 0 ? O_RDONLY : O_WRONLY)
            case .file(let path):
                return try open(path: path, flags: O_WRONLY | O_CREAT | O_TRUNC)
            }
        }
        func open(path: String, flags: Int32) throws -> Int32 {
            let descriptor = Glibc.open(path, flags | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw ChildProcessError("cannot open \(path): \(String(cString: strerror(errno)))") }
            opened.append(descriptor)
            return descriptor
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (standard, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            guard let source = try descriptor(stream, standard: standard) else { continue }
            // dup2 onto itself would keep the descriptor's close-on-exec flag; the child needs it open.
            guard source != standard else { throw ChildProcessError("descriptor \(source) is already standard \(standard)") }
            try Self.check(posix_spawn_file_actions_adddup2(&actions, source, standard), "adddup2")
        }
        try Self.check(Self.closeFrom(&actions, 3), "addclosefrom_np")
        if let directory { try Self.check(Self.changeDirectory(&actions, directory), "addchdir_np") }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        try Self.check(posix_spawnattr_setsigmask(&attributes, &noSignals), "setsigmask")
        try Self.check(posix_spawnattr_setpgroup(&attributes, 0), "setpgroup")
        try Self.check(
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK)), "setflags")

        let argv = [executable.path] + arguments
        let envp = environment.map { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } }
        var pid = pid_t()
        let status = try withCStrings(argv) { argvPointer in
            if let envp {
                return try withCStrings(envp) { posix_spawn(&pid, executable.path, &actions, &attributes, argvPointer, $0) }
            }
            return posix_spawn(&pid, executable.path, &actions, &attributes, argvPointer, environ)
        }
        guard status == 0 else {
            throw ChildProcessError("cannot start \(executable.path): \(String(cString: strerror(status)))")
        }
        processIdentifier = pid
    }

    /// True until the child has ended (collects its exit when it has).
    public var isRunning: Bool { collect(blocking: false) == nil }

    /// How it ended, or nil while it runs.
    public var termination: Termination? { collect(blocking: false) }

    /// Waits for the end; how it ended.
    @discardableResult
    public func waitUntilExit() -> Termination {
        while true {
            if let ended = collect(blocking: true) { return ended }
        }
    }

    /// The exit status, or the number of the signal that ended it (as `Process.terminationStatus`). Waits.
    public var terminationStatus: Int32 {
        switch waitUntilExit() {
        case .exited(let status), .signaled(let status): return status
        }
    }

    /// Sends `signal`; nothing once the child has been collected (its pid may be another process's by then).
    public func signal(_ signal: Int32) {
        lock.lock()
        defer { lock.unlock() }
        if ended == nil { kill(processIdentifier, signal) }
    }

    /// SIGTERM.
    public func terminate() { signal(SIGTERM) }

    /// Collects the exit with `waitpid` under the lock, so exactly one caller reaps it and the others read what
    /// it recorded. A blocking wait sleeps in short steps rather than holding the lock in `waitpid`.
    private func collect(blocking: Bool) -> Termination? {
        while true {
            lock.lock()
            if let ended {
                lock.unlock()
                return ended
            }
            var status: Int32 = 0
            let reaped = waitpid(processIdentifier, &status, WNOHANG)
            if reaped == processIdentifier {
                let low = status & 0x7f
                ended = low == 0 ? .exited((status >> 8) & 0xff) : .signaled(low)
            } else if reaped < 0, errno != EINTR {
                // ECHILD: nobody else reaps our children, so this means it is gone without a status we can read.
                ended = .exited(-1)
            }
            let result = ended
            lock.unlock()
            if result != nil || !blocking { return result }
            usleep(2_000)
        }
    }

    private static func check(_ status: Int32, _ what: String) throws {
        guard status == 0 else { throw ChildProcessError("posix_spawn \(what): \(String(cString: strerror(status)))") }
    }

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias ChangeDirectory =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which Swift's Glibc module does not declare.
    private static let closeFromFunction: CloseFrom? = symbol("posix_spawn_file_actions_addclosefrom_np")
    /// glibc's `posix_spawn_file_actions_addchdir_np` (2.29+), likewise.
    private static let chdirFunction: ChangeDirectory? = symbol("posix_spawn_file_actions_addchdir_np")

    private static func symbol<T>(_ name: String) -> T? {
        guard let address = dlsym(nil, name) else { return nil }
        return unsafeBitCast(address, to: T.self)
    }

    private static func closeFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ first: Int32) -> Int32 {
        guard let closeFromFunction else { return ENOSYS }
        return closeFromFunction(actions, first)
    }

    private static func changeDirectory(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: String)
        -> Int32
    {
        guard let chdirFunction else { return ENOSYS }
        return path.withCString { chdirFunction(actions, $0) }
    }
}

/// Why a child could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// Calls `body` with a NULL-terminated array of C strings for `strings`, valid for the call.
private func withCStrings<R>(
    _ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) throws -> R
) rethrows -> R {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { for pointer in pointers { free(pointer) } }
    return try pointers.withUnsafeBufferPointer { try body($0.baseAddress!) }
}
