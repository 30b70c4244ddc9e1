import ArgumentParser
import Foundation
import Ledger
import LedgerPostgres
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

    /// The log at `location`, for `body`: an SQLite file through its store (read-only: it must exist; writable:
    /// a `Ledger`, so that its projections are kept as events arrive), or a PostgreSQL database (read-only: only
    /// checked to be a ledger; writable: migrated). The PostgreSQL pool is closed afterwards, also on failure.
    /// A URL that does not parse is bad input naming `option`.
    static func withLog<T>(
        _ location: LedgerLocation, readOnly: Bool, busyTimeout: Duration, option: String = "db",
        _ body: (any EventLog) async throws -> T
    ) async throws -> T {
        switch location {
        case .sqlite(let path):
            if readOnly { return try await body(openReadOnly(path, busyTimeout: busyTimeout).log) }
            var configuration = LedgerConfiguration()
            configuration.store.busyTimeout = busyTimeout
            return try await body(Ledger(path: path, configuration: configuration, logger: quietLogger).store.log)
        case .postgres(let url):
            do {
                _ = try PostgresURL(url)
            } catch let error as StoreError {
                throw LedgerError(.badInput, "--\(option): \(error.message)", field: option)
            }
            let log = try await PostgresEventLog(url: url, readOnly: readOnly, logger: quietLogger)
            do {
                let result = try await body(log)
                await log.close()
                return result
            } catch {
                await log.close()
                throw error
            }
        }
    }

    /// The store logs through this when the CLI has not configured logging.
    static let quietLogger = Logger(label: "activity-ledger", factory: { _ in SwiftLogNoOpLogHandler() })
}

