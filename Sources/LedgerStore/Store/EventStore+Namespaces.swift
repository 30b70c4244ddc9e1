import Foundation
import GRDB

extension EventStore {
    /// Moves streams written before apps were namespaces into their app's namespace (`Namespaced`): each
    /// stream's name and its events' ids are stored qualified by the app, and `namespaced_from` is set to the
    /// next position, so the rows already written keep verifying against the hash of their bare names (and every
    /// digest taken before still verifies). Runs inside the caller's migration transaction.
    public static func moveToNamespaces(_ owners: [(stream: String, app: String)], db: Database) throws {
        guard !owners.isEmpty else { return }
        let next = (try Int64.fetchOne(db, sql: "SELECT max(position) FROM events") ?? 0) + 1
        try db.execute(
            sql: "INSERT OR IGNORE INTO store_counters (name, value) VALUES ('namespaced_from', ?)", arguments: [next])
        let rewrite = try db.makeStatement(sql: "UPDATE events SET id = ? WHERE position = ?")
        for (stream, app) in owners where !app.isEmpty && !stream.utf8.contains(Namespaced.separator) {
            // Owned, but no event ever written: nothing to move.
            guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM streams WHERE name = ?", arguments: [stream])
            else { continue }
            try db.execute(
                sql: "UPDATE streams SET name = ? WHERE id = ?", arguments: [Namespaced.qualify(stream, app: app), id])
            let rows = try Row.fetchAll(db, sql: "SELECT position, id FROM events WHERE stream = ?", arguments: [id])
            for row in rows {
                let stored = row["id"] as DatabaseValue
                let bare: String
                switch stored.storage {
                case .blob(let data): bare = data.withUnsafeBytes { StoredEventID.format($0) }
                case .string(let text): bare = text
                default: continue
                }
                rewrite.bind(StoredEventID(Namespaced.qualify(bare, app: app)), at: 1)
                rewrite.bind(row["position"] as Int64, at: 2)
                _ = try rewrite.stepRow(db)
                rewrite.resetBindings()
            }
        }
    }
}
