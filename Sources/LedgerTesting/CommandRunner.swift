import Foundation

/// Runs an executable built next to the test bundle (`swift build --build-tests` builds every product there) and
/// captures what it printed, for tests of the CLI and the server as a user runs them.
public struct CommandRunner: Sendable {
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String

        public init(status: Int32, stdout: String, stderr: String) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
        }
    }

    public let executable: URL
    /// What is started: `executable` itself, or a launcher (`setpriv`) given `prefix` and then `executable`.
    private let launcher: URL?
    private let prefix: [String]

    /// Finds `name` next to the running test bundle, or nil.
    public init?(_ name: String) {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
        ]
        guard let found = candidates.map({ $0.appendingPathComponent(name) })
            .first(where: { FileManager.default.isExecutableFile(atPath: $0.path) })
        else { return nil }
        executable = found
        launcher = nil
        prefix = []
    }

    /// Runs `executable` itself.
    public init(executable: URL) {
        self.executable = executable
        launcher = nil
        prefix = []
    }

    /// Runs `executable` through `launcher`, whose arguments `prefix` come before the executable's path.
    public init(executable: URL, launcher: URL, prefix: [String]) {
        self.executable = executable
        self.launcher = launcher
        self.prefix = prefix
    }

    /// Runs to completion with `arguments`, feeding `input` on stdin when given.
    public func run(_ arguments: [String], input: String? = nil) throws -> Result {
        let out = try PipePair(), err = try PipePair()
        let inPipe = try input.map { _ in try PipePair() }
        let child: ChildProcess
        do {
            if let launcher {
                // From `/`: a launcher that drops privileges may not be able to enter the caller's folder.
                child = try ChildProcess(
                    launcher, prefix + [executable.path] + arguments, directory: "/",
                    stdin: inPipe.map { .descriptor($0.reading) } ?? .null, stdout: .descriptor(out.writing),
                    stderr: .descriptor(err.writing))
            } else {
                child = try ChildProcess(
                    executable, arguments, stdin: inPipe.map { .descriptor($0.reading) } ?? .null,
                    stdout: .descriptor(out.writing), stderr: .descriptor(err.writing))
            }
        } catch {
            for pipe in [out, err] + (inPipe.map { [$0] } ?? []) { pipe.closeBoth() }
            throw error
        }
        out.closeWriting()
        err.closeWriting()
        if let input, let inPipe {
            inPipe.closeReading()
            let handle = FileHandle(fileDescriptor: inPipe.writing, closeOnDealloc: true)
            handle.write(Data(input.utf8))
            try handle.close()
        }
        // Both pipes are read to their end before waiting, stderr on a thread of its own, so a chatty child
        // never blocks on a full pipe.
        let errors = PipeDrain(err.reading)
        let stdout = FileHandle(fileDescriptor: out.reading, closeOnDealloc: true).readDataToEndOfFile()
        let stderr = errors.finish()
        return Result(
            status: child.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self)
        )
    }
}

/// The two descriptors of a `pipe(2)` (a child gets its end through a dup; `ChildProcess` closes the rest).
private struct PipePair {
    let reading: Int32
    let writing: Int32

    init() throws {
        var descriptors: [Int32] = [0, 0]
        guard pipe(&descriptors) == 0 else {
            throw ChildProcessError("pipe: \(String(cString: strerror(errno)))")
        }
        reading = descriptors[0]
        writing = descriptors[1]
    }

    func closeWriting() { close(writing) }
    func closeReading() { close(reading) }
    func closeBoth() {
        close(reading)
        close(writing)
    }
}

/// Reads a descriptor to its end on a thread of its own.
private final class PipeDrain: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var data = Data()

    init(_ descriptor: Int32) {
        Thread {
            self.data = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true).readDataToEndOfFile()
            self.done.signal()
        }.start()
    }

    /// Waits for the end of the stream; all it carried.
    func finish() -> Data {
        done.wait()
        return data
    }
}
