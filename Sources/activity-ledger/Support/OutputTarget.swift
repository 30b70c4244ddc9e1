#if canImport(Glibc)
// `stat` is declared in CoreFoundation's module on Linux's Foundation (a release build refused its members
// without this import).
import CoreFoundation
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Ledger
import LedgerStore

/// Where a file-writing option writes: the one rule for `export --out`, `report --out` and
/// `reconcile nightly --actions` (``resolve(_:option:ledger:)``), and for the new files of `replay --into`,
/// `backup --into` and `copy --to` (``newFile(_:option:ledger:)``).
///
/// `-` is standard output. A path that exists and is not a regular file (a device such as /dev/null, a FIFO, a
/// socket, a descriptor /dev/fd/N of a process substitution) is opened and written in place: a file renamed over it
/// would replace the device or the pipe. A symlink is followed: the file it resolves to is written, the link kept.
/// A regular file or a new path is written under a temporary name beside it and renamed over it, so a reader never
/// sees half a file and a failure leaves the old one. No option may name the ledger it reads or writes, nor SQLite's
/// `-wal`, `-shm` or `-journal` beside it.
struct OutputTarget: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case standardOutput
        /// Opened and written as it is (not a regular file).
        case inPlace
        /// A regular file or a new path: written beside it, then renamed over it.
        case replaced
    }

    let kind: Kind
    /// The file written: the option's path with its symlinks resolved.
    let path: String
    /// The option, without its dashes, for messages.
    let option: String

    /// The target of `given` for `--option`, refused (bad input naming the option) when it is a directory, in a
    /// folder that does not exist, or the ledger `ledger` (`--db`) or one of its companion files.
    static func resolve(_ given: String, option: String, ledger: String?) throws -> OutputTarget {
        if given == "-" { return OutputTarget(kind: .standardOutput, path: given, option: option) }
        guard !given.isEmpty else { throw LedgerError(.badInput, "--\(option): the path is empty", field: option) }
        try refuseLedger(given, option: option, ledger: ledger)
        var path = given
        for _ in 0..<40 {
            var info = stat()
            guard lstat(path, &info) == 0 else {
                guard errno == ENOENT else { throw failure(given, option: option, errno) }
                try requireFolder(of: path, given: given, option: option)
                return OutputTarget(kind: .replaced, path: path, option: option)
            }
            switch info.st_mode & S_IFMT {
            case S_IFREG: return OutputTarget(kind: .replaced, path: path, option: option)
            case S_IFDIR: throw LedgerError(.badInput, "--\(option) \(given): is a directory", field: option)
            case S_IFLNK:
                // /dev/fd/N and /proc/self/fd/N link to "pipe:[…]" and the like: only opening them reaches the file.
                if isDescriptorFolder(folder(of: path)) {
                    return OutputTarget(kind: .inPlace, path: path, option: option)
                }
                guard let next = readLink(path) else { throw failure(given, option: option, errno) }
                path = next
            default: return OutputTarget(kind: .inPlace, path: path, option: option)
            }
        }
        throw failure(given, option: option, ELOOP)
    }

    /// A new file for `--option` (`replay --into`, `backup --into`, `copy --to`): a non-empty path that does not
    /// exist (not even as a dangling symlink), in a folder that exists and can be written, and not the ledger or
    /// one of its companion files, so that the command writes its partial files beside it and nowhere else.
    static func newFile(_ given: String, option: String, ledger: String?) throws {
        guard !given.isEmpty else { throw LedgerError(.badInput, "--\(option): the path is empty", field: option) }
        try refuseLedger(given, option: option, ledger: ledger)
        var info = stat()
        if lstat(given, &info) == 0 {
            throw LedgerError(.badInput, "--\(option) \(given) already exists: give a new path", field: option)
        }
        guard errno == ENOENT else { throw failure(given, option: option, errno) }
        try requireFolder(of: given, given: given, option: option)
        let parent = folder(of: given)
        guard access(parent, W_OK) == 0 else {
            let reason = String(cString: strerror(errno))
            throw LedgerError(.badInput, "--\(option) \(given): cannot write in \(parent) (\(reason))", field: option)
        }
    }

    /// `body`, with a failure of writing the new file named by its option (`--into PATH: SQLite: database or disk
    /// is full`), not by the ledger the command read: that read as the source's fault (found by a probe).
    static func writing<T>(_ option: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PartialFile.WriteError {
            throw LedgerError(
                error.exists ? .badInput : .storage, "--\(option) \(error.destination): \(error.message)",
                field: option, cause: error)
        }
    }

    /// Refuses `given` when it is the ledger file `ledger` or its `-wal`, `-shm` or `-journal`: the same file
    /// (device and inode) when both exist, else the same path once symlinks and the folder are resolved.
    /// (`--db` names the ledger; `copy` passes `--from`.)
    static func refuseLedger(_ given: String, option: String, ledger: String?) throws {
        guard let ledger, case .sqlite(let named) = LedgerLocation(ledger) else { return }
        // SQLite names the companions after the file the ledger's symlinks resolve to.
        let file = canonical(named)
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let candidate = file + suffix
            let same: Bool
            if let output = identity(given), let other = identity(candidate) {
                same = output == other
            } else {
                same = canonical(given) == canonical(candidate)
            }
            guard same else { continue }
            let what = suffix.isEmpty ? "the ledger itself" : "the ledger's \(suffix) file"
            throw LedgerError(
                .badInput, "--\(option) \(given) is \(what) (\(ledger)): give another path", field: option)
        }
    }

    // MARK: - Paths

    private static func failure(_ given: String, option: String, _ code: Int32) -> LedgerError {
        LedgerError(.badInput, "--\(option) \(given): \(String(cString: strerror(code)))", field: option)
    }

    private static func requireFolder(of path: String, given: String, option: String) throws {
        let parent = folder(of: path)
        var info = stat()
        guard stat(parent, &info) == 0 else {
            throw LedgerError(.badInput, "--\(option) \(given): no such directory \(parent)", field: option)
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw LedgerError(.badInput, "--\(option) \(given): \(parent) is not a directory", field: option)
        }
    }

    /// The folder holding `path` (`.` for a bare name).
    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = String(path[..<slash])
        return parent.isEmpty ? "/" : parent
    }

    /// A process's descriptor folder (Linux's /proc/PID/fd, which /dev/fd links to).
    private static func isDescriptorFolder(_ folder: String) -> Bool {
        guard let real = realPath(folder) else { return false }
        let parts = real.split(separator: "/")
        return parts.count == 3 && parts[0] == "proc" && parts[2] == "fd"
            && (parts[1] == "self" || parts[1].allSatisfy(\.isNumber))
    }

    /// Where the symlink `path` points, relative to its folder when the link is relative.
    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return target.hasPrefix("/") ? target : folder(of: path) + "/" + target
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Device and inode of the file `path` names (symlinks followed), if it exists.
    private static func identity(_ path: String) -> [UInt64]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return [UInt64(info.st_dev), UInt64(info.st_ino)]
    }

    /// `path` with its symlinks followed and its folder resolved: the name a file there would have.
    private static func canonical(_ path: String) -> String {
        var path = path
        for _ in 0..<40 {
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK, let next = readLink(path) else { break }
            path = next
        }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return (realPath(folder(of: path)) ?? folder(of: path)) + "/" + name
    }
}
