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
        let out = Pipe(), err = Pipe()
        let inPipe = input.map { _ in Pipe() }
        // Through a launcher from `/`: one that drops privileges may not be able to enter the caller's folder.
        let child = try ChildProcess(
            launcher ?? executable, launcher == nil ? arguments : prefix + [executable.path] + arguments,
            directory: launcher == nil ? nil : "/",
            stdin: inPipe.map { .descriptor($0.fileHandleForReading.fileDescriptor) } ?? .null,
            stdout: .descriptor(out.fileHandleForWriting.fileDescriptor),
            stderr: .descriptor(err.fileHandleForWriting.fileDescriptor))
        // The child holds its ends now; ours are closed so that each stream ends when the child does.
        try out.fileHandleForWriting.close()
        try err.fileHandleForWriting.close()
        if let input, let inPipe {
            try inPipe.fileHandleForReading.close()
            inPipe.fileHandleForWriting.write(Data(input.utf8))
            try inPipe.fileHandleForWriting.close()
        }
        // Both pipes are read to their end before waiting, stderr on a thread of its own, so a chatty child
        // never blocks on a full pipe.
        let errors = PipeDrain(err.fileHandleForReading)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = errors.finish()
        return Result(
            status: child.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self)
        )
    }
}

/// Reads a pipe to its end on a thread of its own.
private final class PipeDrain: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var data = Data()

    init(_ handle: FileHandle) {
        Thread {
            self.data = handle.readDataToEndOfFile()
            self.done.signal()
        }.start()
    }

    /// Waits for the end of the stream; all it carried.
    func finish() -> Data {
        done.wait()
        return data
    }
}
