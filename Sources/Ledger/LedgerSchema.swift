import ActivityModel
import Foundation
import GRDB
import LedgerStore

/// The Ledger target's own tables, as ordered migrations. Each SQL text is identical to
/// `Schemas/sql/ledger/<name>.sql` (a test compares them).
enum LedgerSchema {
    static let migrations: [(name: String, sql: String)] = [
        ("101_projections", ProjectionSQL.projections + "\n"),
        ("102_stream_owners", ProjectionSQL.streamOwners + "\n"),
        ("103_nightly_facts", ProjectionSQL.nightlyFacts + "\n"),
        ("104_honoured_ends", ProjectionSQL.honouredEnds + "\n"),
        ("105_app_namespaces", ProjectionSQL.appNamespaces + "\n"),
        ("201_reconcile_runs", ReconcileRuns.sql + "\n"),
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
        try migrator.migrate(pool)
    }
}
