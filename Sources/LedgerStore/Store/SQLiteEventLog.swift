import GRDB

extension EventStore {
    /// The store as an `EventLog` (the protocol every backend shares).
    public var log: SQLiteEventLog { SQLiteEventLog(store: self) }
}

/// The SQLite file as an `EventLog`: each read is one read transaction on a reader connection, run on a thread
/// of its own (GRDB's async `read`), never on one of Swift's cooperative threads. A wrapper rather than a
/// conformance of `EventStore` itself, whose synchronous reads of the same names serve `/health` and the CLI.
public struct SQLiteEventLog: EventLog {
    public let store: EventStore

    public init(store: EventStore) {
        self.store = store
    }

    public var location: String { store.path }
    var pool: DatabasePool { store.pool }
    var path: String { store.path }

    public func append(_ batch: AppendBatch) async throws -> AppendResult {
        try await store.append(batch)
    }

    public func lastPosition() async throws -> Int64 {
        try await pool.read { db in try self.store.lastPosition(in: db) }
    }

    public func event(id: String) async throws -> RecordedEvent? {
        try await pool.read { db in try self.store.event(in: db, id: id) }
    }

    public func events(stream: String, fromVersion: Int64) async throws -> [RecordedEvent] {
        try await pool.read { db in try self.store.events(in: db, stream: stream, fromVersion: fromVersion) }
    }

    /// Sealed positions come from their segments (`forEachEvent`); rows after them through one ranged statement,
    /// so a page never starts the whole-log readers of a scan.
    public func events(after position: Int64, limit: Int) async throws -> [RecordedEvent] {
        guard limit > 0 else { return [] }
        return try await pool.read { db in
            var page: [RecordedEvent] = []
            let sealed = try EventReader.sealedThrough(db)
            if position < sealed {
                try self.store.forEachEvent(in: db, after: position) { event in
                    guard event.position <= sealed else { return false }
                    page.append(event)
                    return page.count < limit
                }
            }
            guard page.count < limit else { return page }
            let from = max(position, page.last?.position ?? position, sealed)
            return page + (try self.store.reader.fetch(
                db, sql: EventReader.columns + " WHERE e.position > ? AND e.position <= ? ORDER BY e.position"
            ) {
                $0.bind(from, at: 1)
                $0.bind(from + Int64(limit - page.count), at: 2)
            })
        }
    }

    public func digest() async throws -> Digest {
        try await pool.read { db in try self.store.digest(in: db) }
    }

    public func verify(upTo digest: Digest?) async throws -> VerifyReport {
        try await pool.read { db in try self.store.verify(in: db, upTo: digest) }
    }

    public func namespacedFrom() async throws -> Int64 {
        try await pool.read { db in try EventStore.namespacedFrom(db) }
    }

    public func adoptNamespacedFrom(_ position: Int64) async throws {
        guard position > 1 else { return }
        try await pool.write { db in
            guard try EventStore.lastPosition(db) == 0 else {
                throw StoreError(.invalidEvent, "\(self.path) holds events: only an empty log takes a copy's namespaced_from")
            }
            try db.execute(
                sql: "INSERT OR REPLACE INTO store_counters (name, value) VALUES ('namespaced_from', ?)",
                arguments: [position])
        }
    }
}
