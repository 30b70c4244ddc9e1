import GRDB

/// The schema, as ordered migrations. Each SQL text is identical to `Schemas/sql/<name>.sql`
/// (a test compares them); it is embedded because SwiftPM resources cannot live outside the target.
enum Schema {
    /// (name, SQL) in the order they run.
    static let migrations: [(name: String, sql: String)] = [
        ("001_event_log", eventLog001),
        ("002_sealed_segments", sealedSegments002),
    ]

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for migration in migrations {
            migrator.registerMigration(migration.name) { db in try db.execute(sql: migration.sql) }
        }
        return migrator
    }

    static let eventLog001 = """
        -- 001_event_log: the event log, its stream names and its compression dictionaries.
        -- Layout and hash chain are described in Schemas/sql/README.md.

        -- Stream names interned to small integers so that the (stream, version) index stays cheap.
        CREATE TABLE streams (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE
        );

        -- zstd dictionaries trained from the ledger's own payloads; rows are never deleted.
        CREATE TABLE dictionaries (
            id INTEGER PRIMARY KEY,
            created_at INTEGER NOT NULL,
            first_position INTEGER NOT NULL,
            bytes BLOB NOT NULL
        );

        -- One row per event. position is gapless from 1. id is a 16-byte blob for a canonical lower-case
        -- UUID, text otherwise. dictionary is NULL for payloads compressed without one.
        CREATE TABLE events (
            position INTEGER PRIMARY KEY,
            stream INTEGER NOT NULL,
            version INTEGER NOT NULL,
            id BLOB NOT NULL,
            type TEXT NOT NULL,
            at INTEGER NOT NULL,
            recorded_at INTEGER NOT NULL,
            dictionary INTEGER,
            payload BLOB NOT NULL,
            hash BLOB NOT NULL
        );
        CREATE UNIQUE INDEX events_by_stream_version ON events(stream, version);
        CREATE UNIQUE INDEX events_by_id ON events(id);

        -- Running totals kept in the append transaction, so stats need not decompress every row.
        CREATE TABLE store_counters (
            name TEXT PRIMARY KEY,
            value INTEGER NOT NULL
        ) WITHOUT ROWID;
        INSERT INTO store_counters(name, value) VALUES ('payload_bytes', 0), ('stored_payload_bytes', 0);
        """

    static let sealedSegments002 = """
        -- 002_sealed_segments: older ranges of the log sealed into compressed segments.
        -- Layout, check values and the sealing transaction are described in Schemas/sql/README.md.

        -- One row per segment: the positions first_position … last_position, which the sealing transaction deleted
        -- from `events`. Its blocks are the rows first_block … first_block + blocks - 1 of segment_blocks.
        CREATE TABLE segments (
            first_position INTEGER PRIMARY KEY,
            last_position INTEGER NOT NULL,
            first_block INTEGER NOT NULL,
            blocks INTEGER NOT NULL,
            dictionary INTEGER,
            previous_hash BLOB NOT NULL,
            last_hash BLOB NOT NULL,
            checks BLOB NOT NULL
        );

        -- One stream's consecutive events of one segment, as one zstd frame (dictionary: the segment's).
        CREATE TABLE segment_blocks (
            id INTEGER PRIMARY KEY,
            segment INTEGER NOT NULL,
            stream INTEGER NOT NULL,
            first_version INTEGER NOT NULL,
            last_version INTEGER NOT NULL,
            min_at INTEGER NOT NULL,
            data BLOB NOT NULL
        );
        CREATE UNIQUE INDEX segment_blocks_by_stream_version ON segment_blocks(stream, first_version);

        -- The ids of sealed events: key is 47 bits of SHA-256 of the id, block the segment_blocks row holding it.
        CREATE TABLE sealed_ids (
            key INTEGER NOT NULL,
            block INTEGER NOT NULL,
            PRIMARY KEY (key, block)
        ) WITHOUT ROWID;

        INSERT INTO store_counters(name, value) VALUES ('sealed_bytes', 0);
        """
}

extension EventStore {
    /// The store's migrations, (name, SQL) in order; each equals `Schemas/sql/<name>.sql`.
    public static var migrations: [(name: String, sql: String)] { Schema.migrations }
}
