import ArgumentParser
import Foundation
import Ledger
import LedgerPostgres
import LedgerStore
import Logging

/// Opening the ledger file for the read-only commands.
enum StoreAccess {
    /// Opens `path` read-only, failing with a one-line reason when it is missing or not a ledger.
    static func openReadOnly(_ path: String, busyTimeout: Duration, option: String = "db") throws -> EventStore {
        guard FileManager.default.fileExists(atPath: path) else {
            throw LedgerError(.notFound, "no ledger at \(path) (use --db PATH)", field: "db")
        }
        try checkFile(path, option: option, readOnly: true)
        var configuration = StoreConfiguration()
        configuration.readOnly = true
        configuration.busyTimeout = busyTimeout
        return try EventStore(path: path, configuration: configuration, logger: quietLogger)
    }

    /// Refuses, before SQLite sees it, a path that cannot be a ledger file and would otherwise be reported in
    /// SQLite's terms: a directory ("disk I/O error"), and for a reading command an empty file ("holds other
    /// tables"; a writing command makes an empty file a new ledger). Exit 2 naming the option.
    static func checkFile(_ path: String, option: String, readOnly: Bool) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return }
        if isDirectory.boolValue {
            throw LedgerError(.badInput, "--\(option) \(path): is a directory, not a ledger file", field: option)
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? nil
        if readOnly, size == 0 {
            throw LedgerError(
                .badInput,
                "--\(option) \(path): an empty file, not an activity ledger (nothing was ever written to it)",
                field: option)
        }
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
            if readOnly { return try await body(openReadOnly(path, busyTimeout: busyTimeout, option: option).log) }
            try checkFile(path, option: option, readOnly: false)
            var configuration = LedgerConfiguration()
            configuration.store.busyTimeout = busyTimeout
            let ledger = try await opening(path, option: option) {
                try Ledger(path: path, configuration: configuration, logger: quietLogger)
            }
            return try await body(ledger.store.log)
        case .postgres(let url):
            let redacted: String
            do {
                redacted = try PostgresURL(url).redacted
            } catch let error as StoreError {
                throw LedgerError(.badInput, "--\(option): \(error.message)", field: option)
            }
            let log = try await opening(redacted, option: option) {
                try await PostgresEventLog(url: url, readOnly: readOnly, logger: quietLogger)
            }
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

    /// `open()`, its failure named by the option when a command has two ledgers (`copy --from/--to`): reported
    /// under the command's `--from`, a `--to` database that would not open read as the source's failure.
    private static func opening<T>(_ shown: String, option: String, _ open: () async throws -> T) async throws -> T {
        do {
            return try await open()
        } catch where option != "db" {
            let failure = Ledger.storageError(error, path: shown)
            let message = failure.message.contains(shown) ? failure.message : "\(shown): \(failure.message)"
            throw LedgerError(failure.code, "--\(option) \(message)", field: option, cause: error)
        }
    }

    /// The store logs through this when the CLI has not configured logging.
    static let quietLogger = Logger(label: "activity-ledger", factory: { _ in SwiftLogNoOpLogHandler() })
}

