import ArgumentParser
import Foundation
import Ledger
import LedgerStore
import Logging

/// Opening the ledger file for the read-only commands.
enum StoreAccess {
    /// Opens `path` read-only, failing with a one-line reason when it is missing or not a ledger.
    static func openReadOnly(_ path: String, busyTimeout: Duration) throws -> EventStore {
        guard FileManager.default.fileExists(atPath: path) else {
            throw LedgerError(.notFound, "no ledger at \(path) (use --db PATH)", field: "db")
        }
        var configuration = StoreConfiguration()
        configuration.readOnly = true
        configuration.busyTimeout = busyTimeout
        return try EventStore(path: path, configuration: configuration, logger: quietLogger)
    }

    /// The store logs through this when the CLI has not configured logging.
    static let quietLogger = Logger(label: "activity-ledger", factory: { _ in SwiftLogNoOpLogHandler() })
}

