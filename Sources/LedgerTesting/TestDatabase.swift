import Foundation
import LedgerPostgres
import Logging
import PostgresNIO

/// A database of its own on the test cluster, dropped by `drop`.
public struct TestDatabase: Sendable {
    /// Whether the PostgreSQL cases run: `make test` starts a cluster and sets `LEDGER_TEST_POSTGRES`;
    /// `LEDGER_SKIP_POSTGRES=1` leaves them out on purpose (run without either, they fail saying so).
    public static var enabled: Bool { ProcessInfo.processInfo.environment["LEDGER_SKIP_POSTGRES"] != "1" }

    /// PostgresNIO warns when a lease comes before `run()` has started; the tests do not read its logs.
    public static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    public let name: String
    public let url: String
    public let base: String

    public static func baseURL() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["LEDGER_TEST_POSTGRES"] else {
            throw TestPostgresMissing()
        }
        return url
    }

    public static func create() async throws -> TestDatabase {
        let base = try baseURL()
        let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        try await admin(base) { client in
            try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        }
        var components = URLComponents(string: base)!
        components.path = "/\(name)"
        return TestDatabase(name: String(name), url: components.string!, base: base)
    }

    public func drop() async throws {
        try await Self.admin(base) { client in
            try await client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"))
        }
    }

    /// Runs SQL of the test's own on `url` (to damage a log, or to look at it as psql would).
    public static func admin<T: Sendable>(_ url: String, _ body: @Sendable (PostgresClient) async throws -> T) async throws -> T {
        try await PostgresURL(url).withClient(logger: TestDatabase.quiet, body)
    }
}

public struct TestPostgresMissing: Error, CustomStringConvertible {
    public var description: String {
        "LEDGER_TEST_POSTGRES is not set: run through `make test` (it starts a throwaway cluster), or "
            + "`Tools/pg-cluster.sh run swift test …`; LEDGER_SKIP_POSTGRES=1 leaves the PostgreSQL cases out"
    }
}

