import GRDB

/// The schema, as ordered migrations: the files `Schemas/sql/<name>.sql`, compiled in (`Schema/SQL/` holds
/// symbolic links to them, embedded as bytes by `Package.swift`), so the SQL has one home.
enum Schema {
    /// (name, SQL) in the order they run.
    static let migrations: [(name: String, sql: String)] = [
        ("001_event_log", String(decoding: PackageResources._01_event_log_sql, as: UTF8.self)),
        ("002_sealed_segments", String(decoding: PackageResources._02_sealed_segments_sql, as: UTF8.self)),
        ("003_packed_segments", String(decoding: PackageResources._03_packed_segments_sql, as: UTF8.self)),
        ("004_sealed_id_buckets", String(decoding: PackageResources._04_sealed_id_buckets_sql, as: UTF8.self)),
    ]

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for migration in migrations {
            migrator.registerMigration(migration.name) { db in try db.execute(sql: migration.sql) }
        }
        return migrator
    }
}

extension EventStore {
    /// The store's migrations, (name, SQL) in order: the files `Schemas/sql/<name>.sql`.
    public static var migrations: [(name: String, sql: String)] { Schema.migrations }
}

extension DatabaseMigrator {
    /// `migrate(writer)`, also when another process upgrades the same file at the same moment. GRDB reads which
    /// migrations are applied, then runs each missing one in a transaction of its own; two processes opening an old
    /// file together both saw a migration missing, and the second to run it failed ("table reconcile_runs already
    /// exists", "duplicate column name: facts_at"; found by a probe). A failed migration is rolled back, so when the
    /// applied set has grown meanwhile (someone else ran it), this looks again; a failure of its own is thrown.
    public func migrateBesideOthers(_ writer: any DatabaseWriter) throws {
        var attempts = 0
        while true {
            // Read on the writer's connection (a reader connection opened at open left the `-wal` behind at close).
            let before = try writer.writeWithoutTransaction { db in try appliedIdentifiers(db) }
            do {
                try migrate(writer)
                return
            } catch {
                attempts += 1
                let after = try? writer.writeWithoutTransaction { db in try appliedIdentifiers(db) }
                guard attempts < 20, let after, after != before else { throw error }
            }
        }
    }
}
