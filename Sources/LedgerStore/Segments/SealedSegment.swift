import GRDB

/// One sealed segment as read from the file (its row and its blocks' compressed bytes), before decoding.
///
/// Read on the thread that owns the connection; decoded anywhere (`decode`), since decoding needs no database.
struct RawSegment: Sendable {
    struct Block: Sendable {
        var id: Int64
        var stream: String
        var firstVersion: Int64
        var lastVersion: Int64
        var data: [UInt8]
    }

    var first: Int64
    var last: Int64
    var previousHash: [UInt8]
    var lastHash: [UInt8]
    var checks: [UInt8]
    var dictionary: DecompressionDictionary?
    var blocks: [Block]
    /// Positions hashed over bare names (before apps were namespaces): see `EventStore.namespacedFrom`.
    var namespacedFrom: Int64

    static let segmentSQL = """
        SELECT first_position, last_position, first_block, blocks, dictionary, previous_hash, last_hash, checks
        FROM segments
        """

    /// The segment starting at `first`, or nil when there is none. A segment whose blocks or dictionary cannot
    /// be read throws a `RowDecodingError` at its first position.
    static func read(
        first: Int64, db: Database, names: inout [Int64: String], loader: PayloadDecoder, namespacedFrom: Int64
    ) throws -> RawSegment? {
        let statement = try db.cachedStatement(sql: segmentSQL + " WHERE first_position = ?")
        statement.bind(first, at: 1)
        defer { statement.resetBindings() }
        guard try statement.stepRow(db) else { return nil }
        let last = statement.int64(at: 1)
        let firstBlock = statement.int64(at: 2)
        let blockCount = statement.int64(at: 3)
        let dictionaryID = statement.optionalInt64(at: 4)
        var segment = RawSegment(
            first: first, last: last, previousHash: Array(statement.blob(at: 5)), lastHash: Array(statement.blob(at: 6)),
            checks: Array(statement.blob(at: 7)), dictionary: nil, blocks: [], namespacedFrom: namespacedFrom)
        do {
            segment.dictionary = try dictionaryID.map { try loader.loaded($0, db: db) }
            segment.blocks = try readBlocks(from: firstBlock, count: blockCount, db: db, names: &names)
        } catch let error as StoreError {
            throw RowDecodingError(position: first, error: error)
        }
        return segment
    }

    static func readBlocks(from firstBlock: Int64, count: Int64, db: Database, names: inout [Int64: String]) throws
        -> [Block]
    {
        let statement = try db.cachedStatement(
            sql: "SELECT id, stream, first_version, last_version, data FROM segment_blocks WHERE id >= ? AND id < ? ORDER BY id")
        statement.bind(firstBlock, at: 1)
        statement.bind(firstBlock + count, at: 2)
        defer { statement.resetBindings() }
        var blocks: [Block] = []
        blocks.reserveCapacity(Int(clamping: min(count, 65_536)))
        while try statement.stepRow(db) {
            blocks.append(try block(statement, db: db, names: &names))
        }
        guard blocks.count == count else {
            throw StoreError(.corruptPayload, "the segment lists \(count) blocks but \(blocks.count) are stored")
        }
        return blocks
    }

    /// The block at the statement's current row (`id, stream, first_version, last_version, data`).
    static func block(_ statement: Statement, db: Database, names: inout [Int64: String]) throws -> Block {
        let streamID = statement.int64(at: 1)
        let stream: String
        if let known = names[streamID] {
            stream = known
        } else {
            stream = try EventReader.streamName(streamID, db: db)
            if names.count >= 65_536 { names.removeAll(keepingCapacity: true) }
            names[streamID] = stream
        }
        return Block(
            id: statement.int64(at: 0), stream: stream, firstVersion: statement.int64(at: 2),
            lastVersion: statement.int64(at: 3), data: Array(statement.blob(at: 4)))
    }

    /// A block's events (stream and version from its row), hash left empty: the chain needs the whole segment.
    static func events(
        of block: Block, first: Int64, last: Int64, dictionary: DecompressionDictionary?, decoder: PayloadDecoder
    ) throws -> [RecordedEvent] {
        let count = block.lastVersion - block.firstVersion + 1
        guard count >= 1, count <= last - first + 1 else {
            throw StoreError(.corruptPayload, "block \(block.id) has an impossible version range")
        }
        let raw = try block.data.withUnsafeBytes { try decoder.decompress($0, using: dictionary) }
        do {
            return try raw.withUnsafeBytes { bytes in
                try SegmentBlock.decode(
                    bytes, count: Int(count), segmentStart: first, segmentEnd: last, stream: block.stream,
                    firstVersion: block.firstVersion)
            }
        } catch let error as SegmentBlock.BlockError {
            throw StoreError(.corruptPayload, "block \(block.id) does not decode: \(error.reason)")
        }
    }

    /// Every event of the segment in position order, each with its chain hash computed from the segment's
    /// `previous_hash`, and the first position whose hash does not match its stored check value (4 bytes; the
    /// last position's also its whole `last_hash`). Bytes that do not decode, or positions missing or twice, fail the
    /// whole segment at its first position.
    func decode(with decoder: PayloadDecoder, hashes: Bool = true) -> DecodedSegment {
        let count = Int(last - first + 1)
        guard count >= 1, checks.count == count * 4, previousHash.count == 32, lastHash.count == 32 else {
            return DecodedSegment(events: [], mismatch: nil, error: failure("its row is malformed"))
        }
        var events: [RecordedEvent] = []
        events.reserveCapacity(count)
        for block in blocks {
            do {
                events += try Self.events(of: block, first: first, last: last, dictionary: dictionary, decoder: decoder)
            } catch let error as StoreError {
                return DecodedSegment(events: [], mismatch: nil, error: failure(error.message))
            } catch {
                return DecodedSegment(events: [], mismatch: nil, error: failure("\(error)"))
            }
            guard events.count <= count else {
                return DecodedSegment(events: [], mismatch: nil, error: failure("it holds more events than positions"))
            }
        }
        // Sorting moves the events (no copies); then position i must be at index i - first.
        events.sort { $0.position < $1.position }
        for (index, event) in events.enumerated() where event.position != first + Int64(index) {
            let reason =
                event.position < first + Int64(index)
                ? "position \(event.position) is stored twice" : "position \(first + Int64(index)) is missing from it"
            return DecodedSegment(events: [], mismatch: nil, error: failure(reason))
        }
        guard events.count == count else {
            return DecodedSegment(
                events: [], mismatch: nil, error: failure("position \(first + Int64(events.count)) is missing from it"))
        }
        guard hashes else { return DecodedSegment(events: events, mismatch: nil, error: nil) }
        var hasher = ChainHasher()
        var previous = previousHash
        var mismatch: Int64?
        checks.withUnsafeBytes { checks in
            for index in events.indices {
                let hash = hasher.hash(events[index], namespacedFrom: namespacedFrom, previous: previous)
                if mismatch == nil {
                    // The last position's check value is stored too: a change to it is damage like any other.
                    let matches =
                        hash.withUnsafeBytes { $0.load(as: UInt32.self) }
                            == checks.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)
                        && (index < count - 1 || hash == lastHash)
                    if !matches { mismatch = events[index].position }
                }
                events[index].hash = hash
                previous = hash
            }
        }
        return DecodedSegment(events: events, mismatch: mismatch, error: nil)
    }

    private func failure(_ reason: String) -> RowDecodingError {
        RowDecodingError(
            position: first,
            error: StoreError(.corruptPayload, "the segment of positions \(first)…\(last) does not decode: \(reason)"))
    }
}

/// A segment's events in position order with their chain hashes.
struct DecodedSegment: Sendable {
    var events: [RecordedEvent]
    /// The first position whose recomputed hash differs from the stored check value (nil: every one matches).
    var mismatch: Int64?
    /// Set when the segment does not decode (no events then).
    var error: RowDecodingError?
}
