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

/// A database of its own on the test cluster, dropped by `drop`.
struct TestDatabase: Sendable {
    let name: String
    let url: String
    let base: String

    static func baseURL() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["LEDGER_TEST_POSTGRES"] else {
            throw TestPostgresMissing()
        }
        return url
    }

    static func create() async throws -> TestDatabase {
        let base = try baseURL()
        let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        try await admin(base) { client in
            try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        }
        var components = URLComponents(string: base)!
        components.path = "/\(name)"
        return TestDatabase(name: String(name), url: components.string!, base: base)
    }

    func drop() async throws {
        try await Self.admin(base) { client in
            try await client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"))
        }
    }

    /// Runs SQL of the test's own on `url` (to damage a log, or to look at it as psql would).
    static func admin<T: Sendable>(_ url: String, _ body: @Sendable (PostgresClient) async throws -> T) async throws -> T {
        try await PostgresURL(url).withClient(logger: quiet, body)
    }
}

struct TestPostgresMissing: Error, CustomStringConvertible {
    var description: String {
        "LEDGER_TEST_POSTGRES is not set: run through `make test` (it starts a throwaway cluster), or "
            + "`Tools/pg-cluster.sh run swift test …`; LEDGER_SKIP_POSTGRES=1 leaves the PostgreSQL cases out"
    }
}

/// PostgresNIO warns when a lease comes before `run()` has started; the tests do not read its logs.
let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
