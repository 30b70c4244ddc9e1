import GRDB

/// Reads event rows with the raw C API (the scan is a measured hot path) and decompresses payloads.
struct EventReader {
    let decoders: DecoderPool

    /// No join with `streams`: a scan resolves each interned stream id once (`names`), which is cheaper than a
    /// lookup per row.
    static let columns = """
        SELECT e.position, e.stream, e.version, e.id, e.type, e.at, e.recorded_at, e.dictionary, e.payload, e.hash
        FROM events e
        """

    /// A row as stored, before decompression. Its buffers are valid until the statement steps again.
    struct RawRow {
        let statement: Statement
        var position: Int64 { statement.int64(at: 0) }
    }

    /// Steps `statement` (already bound) and calls `body` per row until it returns false.
    func scan(_ statement: Statement, db: Database, _ body: (RawRow) throws -> Bool) throws {
        defer { statement.resetBindings() }
        while try statement.stepRow(db) {
            guard try body(RawRow(statement: statement)) else { return }
        }
    }

    /// Decodes a row, decompressing its payload with `decoder`. `names` caches stream names by interned id
    /// for the length of one query, so a long scan shares one String per stream.
    func decode(
        _ row: RawRow, decoder: PayloadDecoder, names: inout [Int64: String], db: Database
    ) throws -> RecordedEvent {
        let statement = row.statement
        let streamID = statement.int64(at: 1)
        let stream: String
        if let known = names[streamID] {
            stream = known
        } else {
            stream = try Self.streamName(streamID, db: db)
            if names.count >= 65_536 { names.removeAll(keepingCapacity: true) }  // bounded memory on huge logs
            names[streamID] = stream
        }
        let payload: [UInt8]
        do {
            payload = try decoder.decompress(
                statement.blob(at: 8), dictionary: statement.optionalInt64(at: 7), db: db)
        } catch var error as StoreError {
            error = StoreError(error.code, "position \(statement.int64(at: 0)): \(error.message)")
            throw error
        }
        return RecordedEvent(
            position: statement.int64(at: 0), stream: stream, version: statement.int64(at: 2),
            id: statement.eventIDString(at: 3), type: statement.text(at: 4), at: statement.int64(at: 5),
            recordedAt: statement.int64(at: 6), payload: payload, hash: Array(statement.blob(at: 9)))
    }

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

    /// All rows `sql` selects (it must start with `columns`), decoded.
    func fetch(_ db: Database, sql: String, bind: (Statement) -> Void) throws -> [RecordedEvent] {
        let statement = try db.cachedStatement(sql: sql)
        bind(statement)
        var events: [RecordedEvent] = []
        var names: [Int64: String] = [:]
        try decoders.withHandle { decoder in
            try scan(statement, db: db) { row in
                events.append(try decode(row, decoder: decoder, names: &names, db: db))
                return true
            }
        }
        return events
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
