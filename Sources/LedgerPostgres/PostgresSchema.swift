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
        ("002_ledger", #"""
            -- The Ledger target's own tables on PostgreSQL: the projections (as Schemas/sql/ledger/101…105 leave them in a
            -- SQLite file), the API keys and the nightly runs. Projections are updated in the same transaction as the append
            -- that caused them, under the lock on log_head. Times are Unix milliseconds, content timestamps Unix seconds.
            -- Every name column is COLLATE "C": ORDER BY and key ranges (an app's keys are `app` U+001F … `app` U+0020) go by
            -- bytes, as in SQLite, with no locale rules.

            -- One row per activity: what lists and filters need without folding the log (columns of SummaryRow.columns).
            CREATE TABLE activities (
                activity text COLLATE "C" PRIMARY KEY,  -- the stream id after "activity:", qualified by its app
                attributes_type text COLLATE "C",
                installation text COLLATE "C",
                push_type text COLLATE "C",             -- none | token | channel
                channel text COLLATE "C",
                origin text COLLATE "C",
                requested_at bigint,                    -- `at` of the earliest request
                start_at bigint,                        -- scheduledStart, else requested_at
                token text COLLATE "C",                 -- newest token (by at, then position), even when dead
                token_at bigint,
                token_position bigint,
                ended_at bigint,                        -- earliest end the device acts on (event time)
                ended_by text COLLATE "C",              -- app | server
                end_policy text COLLATE "C",            -- default | immediate | after
                end_policy_date bigint,                 -- for after(date)
                dismissed_at bigint,                    -- earliest recorded dismiss
                dismissed_by text COLLATE "C",          -- user | system
                content_timestamp bigint,               -- newest content timestamp recorded on the activity's stream
                stale_at bigint,                        -- staleDate of that content
                events bigint NOT NULL DEFAULT 0,       -- events on the activity's stream
                first_position bigint,
                last_position bigint,
                last_at bigint,
                facts_at bigint,                        -- nightly facts (103_nightly_facts.sql): newest `at` of its own events
                intended_at bigint,                     -- (at, position) of the newest content it was sent
                intended_position bigint,
                intended_hash bytea,                    -- SHA-256 of that content state's canonical JSON
                requests bigint NOT NULL DEFAULT 0,
                doubts bigint NOT NULL DEFAULT 0        -- bits: 1 failed push, 2 observation, 4 unsendable, 8 own subscribe
            );
            CREATE INDEX activities_by_installation ON activities (installation) WHERE installation IS NOT NULL;
            CREATE INDEX activities_by_attributes_type ON activities (attributes_type);
            CREATE INDEX activities_by_token ON activities (token) WHERE token IS NOT NULL;

            -- Every token ever seen on an activity: resolves an APNs 410 to its activity.
            CREATE TABLE tokens (
                token text COLLATE "C" PRIMARY KEY,
                activity text COLLATE "C" NOT NULL,
                first_at bigint NOT NULL,
                dead_at bigint                          -- from a 410: its apnsTimestamp, else the push's at
            );

            -- Which activities listen to which broadcast channel, from when.
            CREATE TABLE channel_members (
                channel text COLLATE "C" NOT NULL,
                activity text COLLATE "C" NOT NULL,
                since bigint NOT NULL,
                PRIMARY KEY (channel, activity)
            );
            CREATE INDEX channel_members_by_activity ON channel_members (activity);

            -- Push-to-start tokens per installation (they rotate; every one is kept).
            CREATE TABLE start_tokens (
                installation text COLLATE "C" NOT NULL,
                token text COLLATE "C" NOT NULL,
                at bigint NOT NULL,
                PRIMARY KEY (installation, token)
            );

            -- The position up to which each projection has applied the log; saved with its rows.
            CREATE TABLE projection_positions (
                name text COLLATE "C" PRIMARY KEY,
                position bigint NOT NULL
            );

            -- API keys, stored as SHA-256 hashes of their secrets (APIKeyStore).
            CREATE TABLE api_keys (
                id text COLLATE "C" PRIMARY KEY,        -- hex of the hash's first 6 bytes
                hash bytea NOT NULL UNIQUE,
                app text COLLATE "C" NOT NULL,
                scopes text NOT NULL,
                created_at double precision NOT NULL,   -- Unix seconds
                revoked_at double precision             -- Unix seconds; NULL while live
            );
            CREATE INDEX api_keys_on_app ON api_keys (app);

            -- Nightly reconciliation runs: the report of each run id, written after its reconcile events.
            CREATE TABLE reconcile_runs (
                run text COLLATE "C" PRIMARY KEY,       -- ReconcileRuns.key: `app/run`, bare in the app-less namespace
                at bigint NOT NULL,                     -- the run's time (Unix ms)
                recorded_at bigint NOT NULL,            -- when it was recorded (Unix ms)
                report text NOT NULL                    -- the report JSON (status recorded)
            );
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
