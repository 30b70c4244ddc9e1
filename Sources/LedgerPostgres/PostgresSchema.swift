import Foundation
import LedgerStore
import Logging
import PostgresNIO

/// The migrations of `Schemas/sql/postgresql/`, compiled in (`SQL/` holds symbolic links to them, embedded as bytes
/// by `Package.swift`), applied in order and recorded in
/// `ledger_migrations`. Servers starting together on one database take turns through a transaction-scoped
/// advisory lock, so each migration runs once.
public enum PostgresSchema {
    public static let migrations: [(name: String, sql: String)] = [
        ("001_event_log", String(decoding: PackageResources._01_event_log_sql, as: UTF8.self)),
        ("002_ledger", String(decoding: PackageResources._02_ledger_sql, as: UTF8.self)),
    ]

    /// The statements of a migration file, one per query (the extended protocol takes one at a time): each ends
    /// with a `;` at the end of a line, which our files keep to.
    static func statements(_ sql: String) -> [String] {
        var statements: [String] = []
        var current = ""
        for line in sql.split(separator: "\n", omittingEmptySubsequences: false) {
            current += line + "\n"
            if line.trimmingCharacters(in: .whitespaces).hasSuffix(";") {
                statements.append(current)
                current = ""
            }
        }
        return statements
    }

    /// A key of our own for `pg_advisory_xact_lock` ("ALEDGER1" as an integer).
    static let migrationLock: Int64 = 0x414C_4544_4745_5231

    /// Refuses a database that is not a ledger, or lacks a migration this version needs (a writing command applies
    /// it), without writing anything.
    static func check(_ client: PostgresClient, location: String, logger: Logger) async throws {
        let ours = try await client.query(
            "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'ledger_migrations'",
            logger: logger
        ).collect().first?.decode(Int64.self) ?? 0
        guard ours > 0 else {
            throw StoreError(.notALedger, "\(location) is not a ledger (no ledger_migrations table)")
        }
        var applied = Set<String>()
        for try await name in try await client.query("SELECT identifier FROM ledger_migrations", logger: logger)
            .decode(String.self)
        {
            applied.insert(name)
        }
        if let missing = migrations.map(\.name).first(where: { !applied.contains($0) }) {
            throw StoreError(
                .outdated, "\(location) lacks migration \(missing); any writing command (import, copy --to, serve) applies it")
        }
    }

    /// Applies what `ledger_migrations` lacks. A database with tables of its own but no `ledger_migrations` is
    /// refused, never adopted (as a foreign SQLite file is).
    static func migrate(_ client: PostgresClient, location: String, logger: Logger) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLock))", logger: logger)
            let ours = try await connection.query(
                "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'ledger_migrations'",
                logger: logger
            ).collect().first?.decode(Int64.self) ?? 0
            if ours == 0 {
                let foreign = try await connection.query(
                    "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()", logger: logger
                ).collect().first?.decode(Int64.self) ?? 0
                guard foreign == 0 else {
                    throw StoreError(
                        .notALedger,
                        "\(location) has \(foreign) tables but is not a ledger; give an empty database")
                }
                try await connection.query(
                    "CREATE TABLE ledger_migrations (identifier text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
                    logger: logger)
            }
            var applied = Set<String>()
            for try await name in try await connection.query("SELECT identifier FROM ledger_migrations", logger: logger)
                .decode(String.self)
            {
                applied.insert(name)
            }
            let known = Set(migrations.map(\.name))
            if let unknown = applied.subtracting(known).sorted().first {
                throw StoreError(
                    .schema, "\(location) was migrated by a newer version (\(unknown)); upgrade activity-ledger")
            }
            for migration in migrations where !applied.contains(migration.name) {
                for statement in statements(migration.sql) {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO ledger_migrations (identifier) VALUES (\(migration.name))", logger: logger)
            }
        }
    }
}
