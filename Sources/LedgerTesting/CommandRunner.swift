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
        let process = Process()
        if let launcher {
            process.executableURL = launcher
            process.arguments = prefix + [executable.path] + arguments
            // From `/`: a launcher that drops privileges may not be able to enter the caller's folder.
            process.currentDirectoryURL = URL(fileURLWithPath: "/")
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let inPipe = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : inPipe
        try ProcessLaunch.start(process)
        if let input {
            inPipe.fileHandleForWriting.write(Data(input.utf8))
            try inPipe.fileHandleForWriting.close()
        }
        // Read both pipes before waiting, so a chatty child never blocks on a full pipe.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self)
        )
    }
}
