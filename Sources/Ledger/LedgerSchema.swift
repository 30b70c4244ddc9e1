import ActivityModel
import Foundation
import GRDB
import LedgerStore

/// The Ledger target's own tables, as ordered migrations: the files `Schemas/sql/ledger/<name>.sql`, compiled in
/// (`SQL/` holds symbolic links to them, embedded as bytes by `Package.swift`).
enum LedgerSchema {
    static let migrations: [(name: String, sql: String)] = [
        ("101_projections", String(decoding: PackageResources._01_projections_sql, as: UTF8.self)),
        ("102_stream_owners", String(decoding: PackageResources._02_stream_owners_sql, as: UTF8.self)),
        ("103_nightly_facts", String(decoding: PackageResources._03_nightly_facts_sql, as: UTF8.self)),
        ("104_honoured_ends", String(decoding: PackageResources._04_honoured_ends_sql, as: UTF8.self)),
        ("105_app_namespaces", String(decoding: PackageResources._05_app_namespaces_sql, as: UTF8.self)),
        ("201_reconcile_runs", ReconcileRuns.sql),
    ]

    /// The identifiers GRDB records for them.
    static var identifiers: [String] { migrations.map { "ledger." + $0.name } }

    static func migrate(_ pool: DatabasePool) throws {
        var migrator = DatabaseMigrator()
        for migration in migrations {
            migrator.registerMigration("ledger." + migration.name) { db in
                if migration.name == "105_app_namespaces" {
                    let owners = try Row.fetchAll(db, sql: "SELECT stream, app FROM stream_owners").map {
                        (stream: $0["stream"] as String, app: $0["app"] as String)
                    }
                    try EventStore.moveToNamespaces(owners, db: db)
                }
                try db.execute(sql: migration.sql)
            }
        }
        try migrator.migrateBesideOthers(pool)
    }
}
