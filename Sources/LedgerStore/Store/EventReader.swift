import GRDB

/// Point and stream reads of events, wherever they are stored: rows of `events` (raw C API, `RawEventChunk`) and
/// blocks of sealed segments (`RawSegment`). Sealing seals a prefix of the log: in any snapshot, positions up to
/// `sealedThrough` are read from the segments, and rows of those positions are *dead* (sealed, waiting to be
/// deleted) and ignored; only rows after it are read.
struct EventReader {
    let decoders: DecoderPool
    let segmentHashes: SegmentHashes

    /// No join with `streams`: a scan resolves each interned stream id once (`names`), which is cheaper than a
    /// lookup per row.
    static let columns = select(hash: "e.hash")
    /// `columns` with NULL for the hash: for reads that hand out events without one (a state needs none, and each
    /// row's 32 bytes were an array of their own).
    static let columnsWithoutHash = select(hash: "NULL")

    private static func select(hash: String) -> String {
        "SELECT e.position, e.stream, e.version, e.id, e.type, e.at, e.recorded_at, e.dictionary, e.payload, \(hash)"
            + " FROM events e"
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

    /// The interned id of a stream name, nil when no event ever named it.
    static func streamID(_ name: String, db: Database) throws -> Int64? {
        let statement = try db.cachedStatement(sql: "SELECT id FROM streams WHERE name = ?")
        statement.bind(name, at: 1)
        defer { statement.resetBindings() }
        return try statement.stepRow(db) ? statement.int64(at: 0) : nil
    }

    /// The version of the stream's last event (nil: none): its rows' last, or when it has no row its last sealed
    /// block's (a dead row has its sealed event's version, so either answer is right).
    static func lastVersion(stream: Int64, db: Database) throws -> Int64? {
        for sql in [
            "SELECT max(version) FROM events WHERE stream = ?",
            "SELECT max(last_version) FROM segment_blocks WHERE stream = ?",
        ] {
            let statement = try db.cachedStatement(sql: sql)
            statement.bind(stream, at: 1)
            defer { statement.resetBindings() }
            if try statement.stepRow(db), let version = statement.optionalInt64(at: 0) { return version }
        }
        return nil
    }

    /// The last sealed position (0 when nothing is sealed): every position up to it is in a segment.
    static func sealedThrough(_ db: Database) throws -> Int64 {
        let statement = try db.cachedStatement(
            sql: "SELECT last_position FROM segments ORDER BY first_position DESC LIMIT 1")
        defer { statement.resetBindings() }
        return try statement.stepRow(db) ? statement.int64(at: 0) : 0
    }

    /// All rows `sql` selects (it must start with `columns`), decoded on this thread (point reads and one
    /// stream's rows; whole-log scans go through `ScanPipeline`). `stream`: the one stream they belong to, when the
    /// caller knows it (its name is then not looked up again).
    func fetch(_ db: Database, sql: String, stream: (id: Int64, name: String)? = nil, bind: (Statement) -> Void)
        throws -> [RecordedEvent]
    {
        let statement = try db.cachedStatement(sql: sql)
        bind(statement)
        defer { statement.resetBindings() }
        var names: [Int64: String] = [:]
        if let stream { names[stream.id] = stream.name }
        return try decoders.withHandle { decoder in
            var events: [RecordedEvent] = []
            while true {
                let chunk = try RawEventChunk.read(
                    statement, db: db, capacity: 128, names: &names, loader: decoder)
                let decoded = chunk.decode(with: decoder)
                if let failure = decoded.error { throw failure.storeError }
                // The first chunk's array is taken as it is (a stream of up to 128 events is one chunk): appending
                // it to an empty one copied every event, a retain and a release of each of its fields (`state --at`
                // on rows: p50 -1 % in three alternating pairs).
                if events.isEmpty { events = decoded.events } else { events += decoded.events }
                if chunk.isLast { return events }
            }
        }
    }

    /// A dead row (sealed, its id not yet filed in `SealedIDs`) is found by the rows' index too; its event is then
    /// read from its segment, the copy `verify` checks: a dead row's own bytes are never read.
    func event(_ db: Database, id: String) throws -> RecordedEvent? {
        let position: Int64? = try {
            let find = try db.cachedStatement(sql: "SELECT position FROM events WHERE id = ?")
            find.bind(StoredEventID(id), at: 1)
            defer { find.resetBindings() }
            return try find.stepRow(db) ? find.int64(at: 0) : nil
        }()
        let sealed = try Self.sealedThrough(db)
        if let position {
            guard position > sealed else { return try sealedEvent(db, position: position) }
            return try fetch(db, sql: Self.columns + " WHERE e.position = ?") { $0.bind(position, at: 1) }.first
        }
        return sealed > 0 ? try sealedEvent(db, id: id) : nil
    }

    func events(_ db: Database, stream: String, fromVersion: Int64, hashes: Bool = true) throws -> [RecordedEvent] {
        guard let streamID = try Self.streamID(stream, db: db) else { return [] }
        let through = try Self.sealedThrough(db)
        // A segment and its blocks are written in one transaction: no segment, no block to look for.
        let sealed =
            through == 0 ? [] : try sealedEvents(db, stream: streamID, fromVersion: fromVersion, hashes: hashes)
        let sql = Self.columns + " WHERE e.stream = ? AND e.version >= ? AND e.position > ? ORDER BY e.version"
        return Self.joined(sealed, try fetch(db, sql: sql, stream: (streamID, stream)) {
            $0.bind(streamID, at: 1)
            $0.bind(fromVersion, at: 2)
            $0.bind(through, at: 3)
        })
    }

    /// A stream's sealed events, then its rows: without a copy of the one that is empty (most streams are all
    /// sealed or all rows; `+` copied every sealed event of a query once more).
    static func joined(_ sealed: consuming [RecordedEvent], _ rows: consuming [RecordedEvent]) -> [RecordedEvent] {
        if rows.isEmpty { return sealed }
        if sealed.isEmpty { return rows }
        var all = sealed
        all += rows
        return all
    }

    /// Like `events(_:stream:fromVersion:)`, only the events with `at` ≤ `atMost`: later rows are never
    /// decompressed (a state as of T needs nothing after T). Events come **without their hash** (empty): a sealed
    /// event's would take its whole segment, and a state needs none.
    func events(_ db: Database, stream: String, atMost: Int64) throws -> [RecordedEvent] {
        guard let streamID = try Self.streamID(stream, db: db) else { return [] }
        let through = try Self.sealedThrough(db)
        let sealed = through == 0 ? [] : try sealedEvents(db, stream: streamID, atMost: atMost)
        let sql = Self.columnsWithoutHash + " WHERE e.stream = ? AND e.at <= ? AND e.position > ? ORDER BY e.version"
        return Self.joined(sealed, try fetch(db, sql: sql, stream: (streamID, stream)) {
            $0.bind(streamID, at: 1)
            $0.bind(atMost, at: 2)
            $0.bind(through, at: 3)
        })
    }

    func event(_ db: Database, position: Int64) throws -> RecordedEvent? {
        if position >= 1, position <= (try Self.sealedThrough(db)) {
            return try sealedEvent(db, position: position)
        }
        let sql = Self.columns + " WHERE e.position = ?"
        return try fetch(db, sql: sql) { $0.bind(position, at: 1) }.first
    }
}
