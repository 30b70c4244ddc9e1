import GRDB

/// The schema, as ordered migrations: the files `Schemas/sql/<name>.sql`, compiled in (`Schema/SQL/` holds
/// symbolic links to them, embedded as bytes by `Package.swift`), so the SQL has one home.
enum Schema {
    /// (name, SQL) in the order they run.
    static let migrations: [(name: String, sql: String)] = [
        ("001_event_log", String(decoding: PackageResources._01_event_log_sql, as: UTF8.self)),
        ("002_sealed_segments", String(decoding: PackageResources._02_sealed_segments_sql, as: UTF8.self)),
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
