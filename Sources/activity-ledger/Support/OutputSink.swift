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

/// Buffered writer to an ``OutputTarget``: standard output, the file itself (a device, FIFO or descriptor), or a
/// temporary file beside it that ``commit()`` renames over it. Dropped without `commit()` (a failure), the
/// temporary file is removed and the target left as it was.
final class OutputSink {
    private let target: OutputTarget
    private let fd: Int32
    /// The temporary file (`.replaced` targets) until it is renamed.
    private var partial: String?
    private var buffer: [UInt8] = []

    init(_ target: OutputTarget) throws {
        self.target = target
        switch target.kind {
        case .standardOutput:
            fflush(nil)  // what `print` buffered goes first
            fd = STDOUT_FILENO
        case .inPlace:
            fd = open(target.path, O_WRONLY | O_TRUNC | O_CLOEXEC)
            guard fd >= 0 else { throw Self.failure(target, "cannot open it", errno) }
        case .replaced:
            let name = target.path.split(separator: "/").last.map(String.init) ?? target.path
            let random = String(UInt32.random(in: .min ... .max), radix: 16)
            let partial = OutputTarget.folder(of: target.path) + "/.\(name).partial-\(getpid())-\(random)"
            fd = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
            guard fd >= 0 else { throw Self.failure(target, "cannot create a file beside it", errno) }
            self.partial = partial
            // A file replaced keeps its permissions; a new one gets 0666 less the umask, as `>` would.
            var info = stat()
            if stat(target.path, &info) == 0 { fchmod(fd, info.st_mode & 0o7777) }
        }
    }

    deinit {
        if target.kind != .standardOutput { close(fd) }
        if let partial { unlink(partial) }
    }

    func write(_ bytes: some Sequence<UInt8>) throws {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 20 { try flush() }
    }

    /// `line` and a newline.
    func writeLine(_ line: some Sequence<UInt8>) throws {
        try write(line)
        try write(CollectionOfOne(0x0A))
    }

    /// Writes what is buffered and, for a replaced file, renames it into place.
    func commit() throws {
        try flush()
        guard let partial else { return }
        guard fsync(fd) == 0 else { throw Self.failure(target, "cannot write it", errno) }
        guard rename(partial, target.path) == 0 else { throw Self.failure(target, "cannot rename into it", errno) }
        self.partial = nil
    }

    private func flush() throws {
        var offset = 0
        while offset < buffer.count {
            let count = buffer.withUnsafeBytes { raw in systemWrite(fd, raw.baseAddress! + offset, raw.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Self.failure(target, "cannot write it", errno)
            }
            offset += count
        }
        buffer.removeAll(keepingCapacity: true)
    }

    private static func failure(_ target: OutputTarget, _ what: String, _ code: Int32) -> LedgerError {
        LedgerError(
            .badInput, "--\(target.option) \(target.path): \(what) (\(String(cString: strerror(code))))",
            field: target.option)
    }
}

private func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(fd, bytes, count)
    #else
    Darwin.write(fd, bytes, count)
    #endif
}
