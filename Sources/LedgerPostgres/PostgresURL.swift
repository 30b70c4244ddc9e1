import Foundation
import LedgerStore
import Logging
import NIOSSL
import PostgresNIO

/// A `--db postgresql://user[:password]@host[:port]/database[?sslmode=…]` value (also `postgres://`), as libpq
/// reads it: the port defaults to 5432, the user to `postgres`, the database to the user's name; a password not in
/// the URL comes from `PGPASSWORD`. `sslmode` is `disable`, `prefer` (the default: TLS when the server offers it)
/// or `require` (TLS or fail; the server's certificate is checked against the system's trusted CAs).
public struct PostgresURL: Sendable, Hashable {
    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var sslMode: String

    public init(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        func refuse(_ why: String) -> StoreError {
            StoreError(.invalidEvent, "\(why) (expected postgresql://user[:password]@host[:port]/database)")
        }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "postgresql" || scheme == "postgres"
        else { throw refuse("not a postgresql:// URL") }
        guard let host = components.host, !host.isEmpty else { throw refuse("no host") }
        self.host = host
        port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw refuse("port \(port) is out of range") }
        user = components.user.flatMap { $0.removingPercentEncoding } ?? "postgres"
        password = components.password.flatMap { $0.removingPercentEncoding } ?? environment["PGPASSWORD"]
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = path.removingPercentEncoding.flatMap { $0.isEmpty ? nil : $0 } ?? user
        sslMode = "prefer"
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let mode = item.value, ["disable", "prefer", "require"].contains(mode) else {
                    throw refuse("sslmode must be disable, prefer or require, got '\(item.value ?? "")'")
                }
                sslMode = mode
            default:
                throw refuse("unknown parameter '\(item.name)' (only sslmode is read)")
            }
        }
    }

    /// The URL without its password: how errors and `stats` name the ledger.
    public var redacted: String {
        "postgresql://\(user)@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)"
    }

    /// One connection, opened and closed before the pool starts: the pool retries a server it cannot reach for a
    /// minute before it gives up, where a command should fail at once naming what is wrong.
    func probe(logger: Logger) async throws {
        let connection = try await PostgresConnection.connect(configuration: connectionConfiguration(), id: 0, logger: logger)
        try await connection.close()
    }

    /// The configuration of one connection of its own (outside a pool), failing within 5 s.
    package func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS
        switch sslMode {
        case "disable": tls = .disable
        case "require": tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        default: tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: tls)
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }

    /// The same server and credentials, another database.
    public func with(database: String) -> PostgresURL {
        var url = self
        url.database = database
        return url
    }

    /// The URL, password included (percent-encoded), as `PostgresEventLog` and `--db` take it.
    public var text: String {
        var text = "postgresql://" + (user.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? user)
        if let password { text += ":" + (password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? password) }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return text + "@\(shownHost):\(port)/\(database.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? database)?sslmode=\(sslMode)"
    }

    /// Runs `body` with a client of its own (`maximumConnections`, one by default) on this URL, and closes the
    /// client afterwards: for SQL of a test's or a bench's own (making and dropping databases, damaging a log).
    public func withClient<T: Sendable>(
        maximumConnections: Int = 1, logger: Logger, _ body: @Sendable (PostgresClient) async throws -> T
    ) async throws -> T {
        let client = PostgresClient(
            configuration: configuration(maximumConnections: maximumConnections), backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }

    /// The pool's configuration for this URL (TLS as `sslmode` says).
    public func configuration(maximumConnections: Int) -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS
        switch sslMode {
        case "disable": tls = .disable
        case "require": tls = .require(.makeClientConfiguration())
        default: tls = .prefer(.makeClientConfiguration())
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: tls)
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }
}
