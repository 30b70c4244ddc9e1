import GRDB

/// Reads event rows with the raw C API (`RawEventChunk`) and decompresses payloads.
struct EventReader {
    let decoders: DecoderPool

    /// No join with `streams`: a scan resolves each interned stream id once (`names`), which is cheaper than a
    /// lookup per row.
    static let columns = """
        SELECT e.position, e.stream, e.version, e.id, e.type, e.at, e.recorded_at, e.dictionary, e.payload, e.hash
        FROM events e
        """

    /// The name of an interned stream id (a row names a stream that must exist).
    static func streamName(_ id: Int64, db: Database) throws -> String {
        let statement = try db.cachedStatement(sql: "SELECT name FROM streams WHERE id = ?")
        statement.bind(id, at: 1)
        defer { statement.resetBindings() }
        guard try statement.stepRow(db) else {
            throw StoreError(.schema, "a row names stream \(id), which is missing from the streams table")
        }
        return statement.text(at: 0)
    }

    /// All rows `sql` selects (it must start with `columns`), decoded on this thread (point reads and one
    /// stream's rows; whole-log scans go through `ScanPipeline`).
    func fetch(_ db: Database, sql: String, bind: (Statement) -> Void) throws -> [RecordedEvent] {
        let statement = try db.cachedStatement(sql: sql)
        bind(statement)
        defer { statement.resetBindings() }
        var names: [Int64: String] = [:]
        return try decoders.withHandle { decoder in
            var events: [RecordedEvent] = []
            while true {
                let chunk = try RawEventChunk.read(
                    statement, db: db, capacity: 128, names: &names, loader: decoder)
                let decoded = chunk.decode(with: decoder)
                if let failure = decoded.error { throw failure.storeError }
                events += decoded.events
                if chunk.isLast { return events }
            }
        }
    }

    func event(_ db: Database, id: String) throws -> RecordedEvent? {
        let sql = Self.columns + " WHERE e.id = ?"
        return try fetch(db, sql: sql) { $0.bind(StoredEventID(id), at: 1) }.first
    }

    func events(_ db: Database, stream: String, fromVersion: Int64) throws -> [RecordedEvent] {
        let sql = Self.columns
            + " WHERE e.stream = (SELECT id FROM streams WHERE name = ?) AND e.version >= ? ORDER BY e.version"
        return try fetch(db, sql: sql) {
            $0.bind(stream, at: 1)
            $0.bind(fromVersion, at: 2)
        }
    }

    /// Like `events(_:stream:fromVersion:)`, only the rows with `at` ≤ `atMost`: later rows are never
    /// decompressed (a state as of T needs nothing after T).
    func events(_ db: Database, stream: String, atMost: Int64) throws -> [RecordedEvent] {
        let sql = Self.columns
            + " WHERE e.stream = (SELECT id FROM streams WHERE name = ?) AND e.at <= ? ORDER BY e.version"
        return try fetch(db, sql: sql) {
            $0.bind(stream, at: 1)
            $0.bind(atMost, at: 2)
        }
    }

    func event(_ db: Database, position: Int64) throws -> RecordedEvent? {
        let sql = Self.columns + " WHERE e.position = ?"
        return try fetch(db, sql: sql) { $0.bind(position, at: 1) }.first
    }
}
