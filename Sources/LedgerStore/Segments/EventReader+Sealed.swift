import GRDB

/// Point and stream reads of sealed events, through the slim indexes beside the segments: blocks by
/// (stream, first version), ids by their buckets (`SealedIDs`), segments by first position. Never a scan.
extension EventReader {
    /// A block row joined with its segment: `id, stream, first_version, last_version, data, data_offset,
    /// data_length, first_position, last_position, dictionary`.
    static let blockColumns = """
        SELECT b.id, b.stream, b.first_version, b.last_version, b.data, b.data_offset, b.data_length,
            s.first_position, s.last_position, s.dictionary
        FROM segment_blocks b JOIN segments s ON s.first_position = b.segment
        """

    /// Events of the stream's blocks that `filter` keeps, with their hashes when `hashes`.
    private func blockEvents(
        _ db: Database, sql: String, bind: (Statement) -> Void, hashes: Bool, filter: (EventView) -> Bool
    ) throws -> [RecordedEvent] {
        let statement = try db.cachedStatement(sql: sql)
        bind(statement)
        defer { statement.resetBindings() }
        var names: [Int64: String] = [:]
        var events: [RecordedEvent] = []
        var packed = SegmentData.Reader(db)
        try decoders.withHandle { decoder in
            while try statement.stepRow(db) {
                let first = statement.int64(at: 7)
                let last = statement.int64(at: 8)
                let dictionary = try statement.optionalInt64(at: 9).map { try decoder.loaded($0, db: db) }
                let start = events.count
                do {
                    let block = try RawSegment.block(statement, db: db, names: &names) { offset, length in
                        try packed.read(segment: first, offset: offset, length: length)
                    }
                    try RawSegment.append(
                        of: block, first: first, last: last, dictionary: dictionary, decoder: decoder, keep: filter,
                        to: &events)
                } catch let error as StoreError {
                    throw RowDecodingError(position: first, error: error).storeError
                }
                if hashes, events.count > start {
                    let chain = try segmentHashes(db, first: first, decoder: decoder)
                    for index in start..<events.count {
                        let offset = Int(events[index].position - first) * 32
                        events[index].hash = Array(chain[offset..<(offset + 32)])
                    }
                }
            }
        }
        return events
    }

    func sealedEvents(_ db: Database, stream: Int64, fromVersion: Int64, hashes: Bool) throws -> [RecordedEvent] {
        try blockEvents(
            db, sql: Self.blockColumns + " WHERE b.stream = ? AND b.last_version >= ? ORDER BY b.first_version",
            bind: {
                $0.bind(stream, at: 1)
                $0.bind(fromVersion, at: 2)
            }, hashes: hashes, filter: { $0.version >= fromVersion })
    }

    /// Without hashes (see `events(_:stream:atMost:)`); blocks whose earliest `at` is later are not read.
    func sealedEvents(_ db: Database, stream: Int64, atMost: Int64) throws -> [RecordedEvent] {
        try blockEvents(
            db, sql: Self.blockColumns + " WHERE b.stream = ? AND b.min_at <= ? ORDER BY b.first_version",
            bind: {
                $0.bind(stream, at: 1)
                $0.bind(atMost, at: 2)
            }, hashes: false, filter: { $0.at <= atMost })
    }

    func sealedEvent(_ db: Database, id: String) throws -> RecordedEvent? {
        try sealedEvent(db, id: id, inBlocks: SealedIDs.candidateBlocks(db, id: id), hashes: true)
    }

    /// The event `id` in the first of `blocks` (ascending) that holds it. Without `hashes` no segment is hashed
    /// or remembered in `segmentHashes` (an import asks about segments it has not committed).
    func sealedEvent(_ db: Database, id: String, inBlocks blocks: [Int64], hashes: Bool) throws -> RecordedEvent? {
        for block in blocks {
            let found = try blockEvents(
                db, sql: Self.blockColumns + " WHERE b.id = ?", bind: { $0.bind(block, at: 1) }, hashes: hashes,
                filter: { $0.id.elementsEqual(id.utf8) })
            if let event = found.first { return event }
        }
        return nil
    }

    func sealedEvent(_ db: Database, position: Int64) throws -> RecordedEvent? {
        let statement = try db.cachedStatement(
            sql: "SELECT first_position FROM segments WHERE first_position <= ? ORDER BY first_position DESC LIMIT 1")
        statement.bind(position, at: 1)
        let found = try statement.stepRow(db) ? statement.int64(at: 0) : nil
        statement.resetBindings()
        guard let first = found else { return nil }
        return try decodedSegment(db, first: first).first { $0.position == position }
    }

    /// Every event of the segment starting at `first`, with hashes (which it keeps in `segmentHashes`).
    func decodedSegment(_ db: Database, first: Int64) throws -> [RecordedEvent] {
        try decoders.withHandle { decoder in
            guard let decoded = try decodeSegment(db, first: first, decoder: decoder) else { return [] }
            return decoded
        }
    }

    /// Reads and decodes the segment starting at `first` (nil: there is none) and keeps its hashes.
    private func decodeSegment(_ db: Database, first: Int64, decoder: PayloadDecoder) throws -> [RecordedEvent]? {
        guard let raw = try rawSegment(db, first: first, decoder: decoder) else { return nil }
        let decoded = raw.decode(with: decoder)
        if let error = decoded.error { throw error.storeError }
        segmentHashes.store(decoded.events.flatMap(\.hash), of: first)
        return decoded.events
    }

    /// The chain hashes of the segment starting at `first`, 32 bytes for each position from `first`.
    private func segmentHashes(_ db: Database, first: Int64, decoder: PayloadDecoder) throws -> [UInt8] {
        if let known = segmentHashes.hashes(of: first) { return known }
        guard let raw = try rawSegment(db, first: first, decoder: decoder) else {
            throw StoreError(.schema, "a block names segment \(first), which is missing")
        }
        switch raw.chainHashes(decoders: decoders) {
        case .success(let hashes):
            segmentHashes.store(hashes, of: first)
            return hashes
        case .failure(let error):
            throw error.storeError
        }
    }

    /// The segment starting at `first` as stored (nil: there is none); one that cannot be read throws naming it.
    private func rawSegment(_ db: Database, first: Int64, decoder: PayloadDecoder) throws -> RawSegment? {
        var names: [Int64: String] = [:]
        do {
            return try RawSegment.read(
                first: first, db: db, names: &names, loader: decoder, namespacedFrom: try EventStore.namespacedFrom(db))
        } catch let error as RowDecodingError {
            throw error.storeError
        }
    }
}
