import Dispatch
import Foundation
import GRDB
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A new file written under a temporary name beside its destination and published only once complete: a failed or
/// interrupted write leaves nothing at the destination, and publishing never replaces a file that appeared there in
/// the meantime (`link(2)` refuses an existing name). The one way `backup` and `replay` write their new file.
///
/// Found by a probe: `replay` wrote straight to its destination, so an interrupted one left an empty ledger that
/// `verify` passed and a retry refused; and two replays racing on one destination removed each other's file (the one
/// refused "already exists" cleaned up the path it had been refused for). A `backup` interrupted by SIGINT or SIGTERM
/// left its full-size temporary copy behind; one whose destination name was long got a temporary name past 255 bytes.
public struct PartialFile: Sendable {
    /// Where the file goes once complete.
    public let destination: String
    /// Where it is written meanwhile: hidden, beside the destination (same file system), named after this process.
    public let path: String

    /// A failure of writing the new file, not of reading the source: callers name it by the destination.
    public struct WriteError: Error, CustomStringConvertible, Sendable {
        public let destination: String
        public let message: String
        /// The destination exists (made by someone else meanwhile): nothing was replaced.
        public let exists: Bool
        public var description: String { message }

        public init(destination: String, message: String, exists: Bool) {
            self.destination = destination
            self.message = message
            self.exists = exists
        }

        /// `error` as the new file's failure when it is one SQLite reports for the file being written (opening,
        /// writing or filling it; the source is open and read already), else nil. (The message can be the source
        /// connection's "not an error" for a full disk, so the code says what happened.)
        public init?(_ error: any Error, destination: String) {
            guard let database = error as? DatabaseError,
                [.SQLITE_CANTOPEN, .SQLITE_FULL, .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_IOERR].contains(
                    database.resultCode.primaryResultCode)
            else { return nil }
            let detail = database.message.flatMap { $0 == "not an error" ? nil : $0 }
            self.init(
                destination: destination,
                message: "SQLite: \(detail ?? String(describing: database.resultCode.primaryResultCode))", exists: false)
        }
    }

    public init(destination: String) {
        let url = URL(fileURLWithPath: destination)
        // A name of up to 255 bytes stays legal with the dot and the suffix: the destination's name is shortened.
        var name = url.lastPathComponent
        while name.utf8.count > 200 { name.removeLast() }
        self.destination = destination
        let folder = url.deletingLastPathComponent()
        path = folder.appendingPathComponent(".\(name).partial-\(getpid())").path
        Self.registered.withLock { _ = $0.insert(path) }
        Self.removeAbandoned(in: folder.path, prefix: ".\(name).partial-")
    }

    /// Removes the temporary files a killed writer of the same destination left (`kill -9`, a crash: no signal
    /// handler runs): those named after a process that no longer exists. A live process's file is left alone, as
    /// is any name that does not parse; a process id reused since only keeps a stale file until the next run.
    static func removeAbandoned(in folder: String, prefix: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            let suffix = rest.dropFirst(digits.count)
            guard let pid = pid_t(digits), pid > 0, pid != getpid(),
                companions.contains(String(suffix)),
                kill(pid, 0) == -1, errno == ESRCH
            else { continue }
            unlink(folder + "/" + name)
        }
    }

    /// Moves the complete file (closed, its WAL folded in) to the destination, which must not exist.
    public func publish() throws {
        if FileManager.default.fileExists(atPath: path + "-wal"),
            ((try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber)?.intValue ?? 0) > 0
        {
            throw WriteError(destination: destination, message: "the new file still has a WAL; not published", exists: false)
        }
        guard link(path, destination) == 0 else {
            let code = errno
            throw WriteError(
                destination: destination,
                message: code == EEXIST
                    ? "exists now (made by someone else meanwhile); nothing was replaced"
                    : String(cString: strerror(code)),
                exists: code == EEXIST)
        }
        remove()
    }

    /// Removes the temporary file and its companions (`-wal`, `-shm`, `-journal`).
    public func remove() {
        Self.unlinkAll(path)
        Self.registered.withLock { _ = $0.remove(path) }
    }

    /// The temporary files of this process not yet published or removed.
    private static let registered = Mutex<Set<String>>([])

    /// The file's own name and SQLite's companions of it.
    private static let companions = ["", "-wal", "-shm", "-journal"]

    private static func unlinkAll(_ path: String) {
        for suffix in companions { unlink(path + suffix) }
    }

    /// From now on SIGINT and SIGTERM remove this process's temporary files before it exits (status 128 + signal), as
    /// the default action would end it. For commands that write one (`backup`, `replay`), not for `serve`.
    public static func removeOnSignals() {
        signalSources.withLock { sources in
            guard sources.isEmpty else { return }
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    for path in registered.withLock({ $0 }) { unlinkAll(path) }
                    _exit(128 + number)
                }
                source.resume()
                sources.append(source)
            }
        }
    }

    private static let signalSources = Mutex<[any DispatchSourceSignal]>([])
}
