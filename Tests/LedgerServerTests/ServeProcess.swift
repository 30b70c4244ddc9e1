import Foundation
import Ledger
import LedgerTesting

/// The real `activity-ledger` binary, run as a child process (for the crash test).
struct ServeProcess {
    let process: ChildProcess
    let port: Int

    /// `activity-ledger` is built next to the test bundle (`swift build --build-tests` builds it).
    static func binary() -> URL? {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
        ]
        return candidates.map { $0.appendingPathComponent("activity-ledger") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// A new ledger file in a temporary directory with one API key of `app` (the key's secret).
    struct KeyedLedger {
        let binary: URL
        let directory: TemporaryDirectory
        let db: String
        let key: String
    }

    static func keyedLedger(prefix: String, app: String, scope: String = "ingest") async throws -> KeyedLedger {
        guard let binary = binary() else { throw ServeError(message: "activity-ledger not found next to the test bundle") }
        let directory = TemporaryDirectory(prefix: prefix)
        let db = directory.file("ledger.sqlite")
        let key = try await offThePool {
            try run(binary, ["keys", "create", "--app", app, "--scope", scope, "--db", db])
        }
        return KeyedLedger(binary: binary, directory: directory, db: db, key: key)
    }

    /// Runs `activity-ledger ARGUMENTS` to completion and returns its standard output, trimmed.
    static func run(_ binary: URL, _ arguments: [String]) throws -> String {
        try output(of: binary, arguments).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs `executable ARGUMENTS` to completion: its standard output, or an error naming it when it fails.
    static func output(of executable: URL, _ arguments: [String]) throws -> String {
        let result = try CommandRunner(executable: executable).run(arguments)
        guard result.status == 0 else {
            throw ServeError(
                message: "\(executable.lastPathComponent) \(arguments.joined(separator: " ")) exited \(result.status)")
        }
        return result.stdout
    }

    /// Starts `serve` on a free loopback port and waits (at most 20 s) until it says where it listens.
    /// `arguments` are added to serve's; `environment` to this process's; `log` is where its stderr goes.
    static func start(
        _ binary: URL, db: String, directory: TemporaryDirectory, name: String = "serve", arguments: [String] = [],
        environment: [String: String] = [:], log: String? = nil
    ) async throws -> ServeProcess {
        let output = directory.file("\(name).out")
        FileManager.default.createFile(atPath: output, contents: nil)
        let process = try ChildProcess(
            binary, ["serve", "--db", db, "--host", "127.0.0.1", "--port", "0", "--durability", "full"] + arguments,
            environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
            stdout: .file(output), stderr: log.map { .file($0) } ?? .null)
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            if let range = text.range(of: "listening on http://127.0.0.1:") {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                if let port = Int(digits) { return ServeProcess(process: process, port: port) }
            }
            guard process.isRunning else { throw ServeError(message: "serve exited with \(process.terminationStatus)") }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.terminate()
        throw ServeError(message: "serve did not report its port within 20 s")
    }

    /// SIGTERM, then waits (at most `limit`) for the exit; returns the exit status (nil when a signal ended it)
    /// and how long it took, or nil (after a SIGKILL) when it did not exit in time.
    func terminate(within limit: Duration) -> (status: Int32?, took: Duration)? {
        let start = ContinuousClock.now
        process.terminate()
        while process.isRunning, ContinuousClock.now - start < limit { usleep(20_000) }
        guard !process.isRunning else {
            killNine()
            return nil
        }
        guard case .exited(let status) = process.waitUntilExit() else { return (nil, ContinuousClock.now - start) }
        return (status, ContinuousClock.now - start)
    }

    /// SIGTERM, then waits for the process to exit (graceful shutdown).
    func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    /// SIGKILL: no drain, no clean close of the database.
    func killNine() {
        process.signal(SIGKILL)
        process.waitUntilExit()
    }
}

struct ServeError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// The acknowledged events (id → position) that `ledger` does not hold in `app` at the position acknowledged.
func missingAcknowledged(_ acked: [String: Int64], in ledger: Ledger, app: String) async -> [String: Int64] {
    var missing: [String: Int64] = [:]
    for (id, position) in acked where (try? await ledger.event(id: id, app: app))?.position != position {
        missing[id] = position
    }
    return missing
}
