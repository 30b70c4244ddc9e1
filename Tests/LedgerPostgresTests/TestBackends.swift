import Foundation
import LedgerPostgres
import LedgerStore
import LedgerTesting
import Logging
import PostgresNIO
import Testing

/// The backends the conformance suite runs on. `make test` starts a throwaway PostgreSQL cluster
/// (`Tools/pg-cluster.sh run`) and passes its URL in `LEDGER_TEST_POSTGRES`; run alone, the PostgreSQL cases fail
/// saying so, unless `LEDGER_SKIP_POSTGRES=1` leaves them out on purpose.
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    var testDescription: String { rawValue }

    static var all: [Backend] {
        ProcessInfo.processInfo.environment["LEDGER_SKIP_POSTGRES"] == "1" ? [.sqlite] : allCases
    }

    /// A new, empty log of this backend, with `body` run on it and everything removed afterwards.
    func withLog<T>(_ body: (any EventLog, Location) async throws -> T) async throws -> T {
        switch self {
        case .sqlite:
            let directory = TemporaryDirectory(prefix: "conformance")
            let path = directory.file("ledger.sqlite")
            var configuration = StoreConfiguration()
            configuration.durability = .off
            let store = try EventStore(path: path, configuration: configuration, logger: quiet)
            return try await body(store.log, Location(text: path, directory: directory))
        case .postgres:
            let database = try await TestDatabase.create()
            let log = try await PostgresEventLog(url: database.url, logger: quiet)
            do {
                let result = try await body(log, Location(text: database.url, directory: nil))
                await log.close()
                try await database.drop()
                return result
            } catch {
                await log.close()
                try? await database.drop()
                throw error
            }
        }
    }

    /// Another handle on the same log (another process would open one like it).
    func open(_ location: Location) async throws -> any EventLog {
        switch self {
        case .sqlite:
            var configuration = StoreConfiguration()
            configuration.durability = .off
            return try EventStore(path: location.text, configuration: configuration, logger: quiet).log
        case .postgres:
            return try await PostgresEventLog(url: location.text, logger: quiet)
        }
    }

    struct Location: Sendable {
        var text: String
        var directory: TemporaryDirectory?
    }
}

/// Closes a second handle when it is a PostgreSQL one (an SQLite store closes when released).
func close(_ log: any EventLog) async {
    if let postgres = log as? PostgresEventLog { await postgres.close() }
}

/// PostgresNIO warns when a lease comes before `run()` has started; the tests do not read its logs.
let quiet = TestDatabase.quiet
