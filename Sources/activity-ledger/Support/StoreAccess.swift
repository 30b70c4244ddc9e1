import ArgumentParser
import Foundation
import LedgerStore
import Logging

/// Opening the ledger file for the read-only commands, and the one-line failure they all share.
enum StoreAccess {
    /// Opens `path` read-only, failing with a one-line reason when it is missing or not a ledger.
    static func openReadOnly(_ path: String, busyTimeout: Duration) throws -> EventStore {
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure("no ledger at \(path) (use --db PATH)", code: Exit.notFound)
        }
        var configuration = StoreConfiguration()
        configuration.readOnly = true
        configuration.busyTimeout = busyTimeout
        return try EventStore(path: path, configuration: configuration, logger: quietLogger)
    }

    /// The store logs through this when the CLI has not configured logging.
    static let quietLogger = Logger(label: "activity-ledger", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Compact JSON with stable key order and `/` unescaped.
    static func json<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

/// A failure printed as one line on stderr, exiting with `code`.
struct CommandFailure: Error, CustomStringConvertible {
    let message: String
    let code: Int32

    init(_ message: String, code: Int32 = 1) {
        self.message = message
        self.code = code
    }

    var description: String { message }

    /// Prints the reason and returns the exit code ArgumentParser should use.
    static func exit(_ error: any Error) -> ExitCode {
        let failure = error as? CommandFailure
        let message = failure?.message ?? "\(error)"
        FileHandle.standardError.write(Data("activity-ledger: \(message)\n".utf8))
        return ExitCode(failure?.code ?? 1)
    }
}
