import Foundation
import LedgerStore
import Logging
import PostgresNIO

/// The migrations of `Schemas/sql/postgresql/`, embedded verbatim (SwiftPM resources cannot reach outside the
/// target; `PostgresSchemaTests` holds them equal to the files), applied in order and recorded in
/// `ledger_migrations`. Servers starting together on one database take turns through a transaction-scoped
/// advisory lock, so each migration runs once.
public enum PostgresSchema {
    public static let migrations: [(name: String, sql: String)] = [
        ("001_event_log", #"""
            -- The event log on PostgreSQL (SPEC §6 "Scale-out"): one row per event, the same logical fields and chain hash
            -- as the SQLite file, so `digest` is the same on both for the same events.
            CREATE TABLE events (
                position bigint PRIMARY KEY,            -- gapless from 1
                stream text COLLATE "C" NOT NULL,       -- app-qualified name (app, U+001F, name; bare in the app-less namespace)
                version bigint NOT NULL,                -- 1, 2, … per stream
                id text COLLATE "C" NOT NULL UNIQUE,    -- app-qualified event id (byte order: no locale rules in its index)
                type text NOT NULL,
                at bigint NOT NULL,                     -- event time, Unix ms
                recorded_at bigint NOT NULL,            -- Unix ms
                payload bytea NOT NULL,                 -- the event's JSON as sent (TOAST compresses large ones)
                hash bytea NOT NULL,                    -- SHA-256 chain hash (Schemas/sql/README.md), 32 bytes
                UNIQUE (stream, version)
            );

            -- The tail of the chain, one row. Every append locks it (SELECT … FOR UPDATE) for its transaction: appends of
            -- every process on the database take positions one after the other, so positions stay gapless and the chain
            -- stays linear.
            CREATE TABLE log_head (
                singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
                position bigint NOT NULL,
                hash bytea NOT NULL,
                namespaced_from bigint NOT NULL DEFAULT 0  -- as store_counters.namespaced_from of a SQLite file it was copied from
            );
            INSERT INTO log_head (position, hash) VALUES (0, '\x0000000000000000000000000000000000000000000000000000000000000000');
            """#),
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
