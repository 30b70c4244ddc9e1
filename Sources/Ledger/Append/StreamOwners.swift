import ActivityModel
import Foundation
import GRDB
import LedgerStore
import Synchronization

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

    /// Owners seen in committed data. Bounded: it forgets everything when full, and then learns again.
    final class Cache: Sendable {
        private let owners = Mutex<[String: String]>([:])
        static let capacity = 200_000

        /// The owner of each stream, or nil for the streams it does not know.
        func owners(of streams: [String]) -> [String?] {
            owners.withLock { known in streams.map { known[$0] } }
        }

        func remember(_ found: [(stream: String, app: String)]) {
            guard !found.isEmpty else { return }
            owners.withLock { known in
                if known.count + found.count > Self.capacity { known.removeAll(keepingCapacity: true) }
                for (stream, app) in found { known[stream] = app }
            }
        }
    }
}
