import ActivityModel
import Foundation
import GRDB
import LedgerStore

/// The `stream_owners` table: a stream belongs to the app that first wrote it.
enum StreamOwners {
    static func owner(of stream: String, _ db: Database) throws -> String? {
        try String.fetchOne(
            db.cachedStatement(sql: "SELECT app FROM stream_owners WHERE stream = ?"), arguments: [stream]
        )
    }

    /// Claims `stream` for `app` inside the append transaction; throws when another app got there first.
    static func claim(_ stream: String, app: String, _ db: Database) throws {
        try db.cachedStatement(sql: "INSERT OR IGNORE INTO stream_owners (stream, app) VALUES (?, ?)")
            .execute(arguments: [stream, app])
        if db.changesCount == 0, let owner = try owner(of: stream, db), owner != app {
            throw LedgerError(.forbidden, "stream \(stream) belongs to another app", field: "stream")
        }
    }
}
