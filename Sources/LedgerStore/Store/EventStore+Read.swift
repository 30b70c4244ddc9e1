import GRDB

extension EventStore {
    var reader: EventReader { EventReader(decoders: decoders, segmentHashes: segmentHashes) }

    /// Events of `stream` from `fromVersion` on, in version order (empty when the stream does not exist).
    ///
    /// Without `hashes`, sealed events come with an empty hash. With it, each segment they are in is hashed
    /// whole once (`RawSegment.chainHashes`: a stream's events are spread over the segments of their time), then
    /// its hashes are kept in memory for later reads (`SegmentHashes`).
    public func events(
        in db: Database, stream: String, fromVersion: Int64 = 1, hashes: Bool = true
    ) throws -> [RecordedEvent] {
        try reader.events(db, stream: stream, fromVersion: fromVersion, hashes: hashes)
    }

    /// Events of `stream` whose `at` (event time, Unix ms) is at most `atMost`, in version order: what a
    /// query "as of T" needs, without decompressing the rest of the stream. They come without their hashes (empty).
    public func events(in db: Database, stream: String, atMost: Int64) throws -> [RecordedEvent] {
        try reader.events(db, stream: stream, atMost: atMost)
    }

    /// The event stored under `id`, if any.
    public func event(in db: Database, id: String) throws -> RecordedEvent? {
        try reader.event(db, id: id)
    }

    /// The events at `positions`, in the order given; missing positions are skipped.
    public func events(in db: Database, positions: [Int64]) throws -> [RecordedEvent] {
        try positions.compactMap { try reader.event(db, position: $0) }
    }

    /// Streams every event after `position` in position order, in one read transaction (a consistent
    /// snapshot) with bounded memory. `body` returns false to stop. Sealed events carry their chain hash only
    /// with `hashes` (computing it is a fifth of reading them); rows always have theirs.
    public func forEachEvent(
        after position: Int64, hashes: Bool = true, _ body: (RecordedEvent) throws -> Bool
    ) throws {
        try pool.read { db in
            try forEachEvent(in: db, after: position, hashes: hashes, body)
        }
    }

    /// Like `forEachEvent(after:_:)`, inside a transaction the caller holds; `body` is always called on the
    /// caller's thread, in position order. A scan of a few thousand events decompresses on a second thread
    /// (`ScanPipeline`); a longer one is read by two threads on connections of their own (`ParallelScan`), which
    /// relies on events never being changed in place (sealing moves rows into segments in one transaction, so a
    /// newer connection finds a row's event in its segment: `SealedScan` reads the sealed part first, the rows
    /// after it): rows the caller's transaction appended are read on its
    /// own connection.
    public func forEachEvent(
        in db: Database, after position: Int64, hashes: Bool = true, _ body: (RecordedEvent) throws -> Bool
    ) throws {
        try forEachEvent(in: db, after: position, hashes: hashes, transform: { _ in () }) { event, _ in try body(event) }
    }

    /// Like `forEachEvent(in:after:_:)`, with `transform` run on each event beside the reading (on the scan's
    /// second thread when it keeps up, else on this one): pure per-event work such as parsing the payload
    /// overlaps the SQLite reads. `body` gets each event with its value, in position order, on this thread.
    public func forEachEvent<T: Sendable>(
        in db: Database, after position: Int64, hashes: Bool = true, transform: @escaping @Sendable (RecordedEvent) throws -> T,
        _ body: (RecordedEvent, T) throws -> Bool
    ) throws {
        do {
            var position = position
            let sealed = try EventReader.sealedThrough(db)
            if position < sealed {
                let going = try SealedScan.run(
                    path: pool.path, db: db, after: position, decoders: decoders, hashes: hashes, transform: transform
                ) { chunk in
                    // Lent through the buffers, not copied out of the arrays (see `SealedScan.decode`).
                    let going = try chunk.events.withUnsafeBufferPointer { events in
                        try chunk.values.withUnsafeBufferPointer { values in
                            for index in values.indices where events[index].position > position {
                                guard try body(events[index], values[index]) else { return false }
                            }
                            return true
                        }
                    }
                    guard going else { return false }
                    if let error = chunk.error { throw error }
                    return true
                }
                guard going else { return }
                position = sealed
            }
            let last = try lastPosition(in: db)
            if ParallelScan.worthReaders(events: last - position) {
                try ParallelScan.run(
                    path: pool.path, db: db, after: position, last: last, decoders: decoders, transform: transform, body)
                return
            }
            let statement = try db.makeStatement(sql: EventReader.columns + " WHERE e.position > ? ORDER BY e.position")
            statement.bind(position, at: 1)
            try decoders.withHandle { decoder in
                try ScanPipeline.run(statement, db: db, decoder: decoder, transform: transform, body)
            }
        } catch let error as RowDecodingError {
            throw error.storeError
        }
    }

    /// Every event after `position` lent to `transform` as a view (`EventView`: no event built, no chain hash),
    /// beside the reading as `forEachEvent(in:after:hashes:transform:_:)` runs its transform; `body` gets each
    /// event's position and value, in position order, on this thread, until it returns false. For a whole-log pass
    /// that keeps little of each event (a rebuild): sealed segments lend their blocks' decompressed bytes
    /// (`RawSegment.lend`); rows are read into events first, which `built` transforms when given (lending each
    /// row through this generic function cost a rows rebuild ~5 %), else `transform` gets them lent.
    public func forEachEventView<T: Sendable>(
        in db: Database, after position: Int64, transform: @escaping @Sendable (EventView) -> T,
        built: (@Sendable (RecordedEvent) -> T)? = nil, _ body: (Int64, T) throws -> Bool
    ) throws {
        try forEachEventView(in: db, after: position, makeTransform: { transform }, built: built, body)
    }

    /// `forEachEventView(in:after:transform:built:_:)` with a transform that keeps state between the events it is
    /// lent (a memo of the last stream, say): `makeTransform` makes one for each segment, used on one thread only.
    public func forEachEventView<T: Sendable>(
        in db: Database, after position: Int64, makeTransform: @escaping @Sendable () -> (EventView) -> T,
        built: (@Sendable (RecordedEvent) -> T)? = nil, _ body: (Int64, T) throws -> Bool
    ) throws {
        var position = position
        do {
            let sealed = try EventReader.sealedThrough(db)
            if position < sealed {
                let going = try SealedScan.lending(
                    path: pool.path, db: db, after: position, decoders: decoders, makeTransform: makeTransform
                ) { chunk in
                    if let slots = chunk.values.first {
                        // Each value moved out to `body`, none copied.
                        while slots.taken < slots.count {
                            let at = chunk.first + Int64(slots.taken)
                            let value = slots.take()
                            if at > position { guard try body(at, value) else { return false } }
                        }
                    }
                    if let error = chunk.error { throw error }
                    return true
                }
                guard going else { return }
                position = sealed
            }
        } catch let error as RowDecodingError {
            throw error.storeError
        }
        // Rows are transformed on the scan's helper thread, and a made transform belongs to one thread: without
        // `built`, each row gets one of its own.
        let transform = built ?? { event in EventView.lending(event) { makeTransform()($0) } }
        try forEachEvent(in: db, after: position, hashes: false, transform: transform) { event, value in
            try body(event.position, value)
        }
    }

    /// Version of the last event of `stream`, or nil when the stream has none.
    public func streamVersion(in db: Database, stream: String) throws -> Int64? {
        guard let id = try EventReader.streamID(stream, db: db) else { return nil }
        return try EventReader.lastVersion(stream: id, db: db)
    }

    /// Position of the last event (0 for an empty log).
    ///
    /// One statement, which SQLite runs in its own read transaction: no explicit `BEGIN`/`COMMIT` around it
    /// (`unsafeRead`), which `/health` asks on every request.
    public func lastPosition() throws -> Int64 {
        try pool.unsafeRead { db in try lastPosition(in: db) }
    }

    /// Position of the last event as seen by `db` (0 for an empty log).
    public func lastPosition(in db: Database) throws -> Int64 {
        try Self.lastPosition(db)
    }

    /// The last row's position, or the last segment's when it is later (every row is sealed); 0 for an empty log.
    /// One statement (`/health` asks it on every request).
    static func lastPosition(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: """
            SELECT max(coalesce((SELECT max(position) FROM events), 0),
                       coalesce((SELECT last_position FROM segments ORDER BY first_position DESC LIMIT 1), 0))
            """)) ?? 0
    }
}
