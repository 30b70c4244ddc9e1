import GRDB

/// Rows of a scan copied out of SQLite on the reading thread (the only one that may touch the connection),
/// to be decompressed and turned into `RecordedEvent`s later on any thread.
///
/// Stream names and dictionaries are resolved while reading, since both need the database; the id, type,
/// compressed payload and hash of each row are kept back to back in one byte buffer.
struct RawEventChunk: Sendable {
    private struct Row: Sendable {
        var position: Int64
        var stream: String
        var version: Int64
        var at: Int64
        var recordedAt: Int64
        /// Index into the chunk's `dictionaries`, -1 for none: a reference per row would make both threads
        /// write the same reference count, 512 times a chunk.
        var dictionary: Int32
        var idIsBlob: Bool
        var idCount: Int
        var typeCount: Int
        var payloadCount: Int
        var hashCount: Int
    }

    private var rows: [Row] = []
    private var bytes: [UInt8] = []
    private var dictionaries: [DecompressionDictionary] = []
    /// The row after `rows` could not be read (its stream or dictionary is missing); no chunk follows.
    private var failure: RowDecodingError?
    /// True when no chunk follows this one: the statement has no row left, or a row failed.
    private(set) var isLast = false

    var count: Int { rows.count }

    /// Steps `statement` (bound, selecting `EventReader.columns`) for up to `capacity` rows. `names` caches stream
    /// names for the whole scan; `loader` loads the dictionaries rows name. After a chunk with `isLast`, the
    /// statement must not be stepped again (SQLite would start it over).
    static func read(
        _ statement: Statement, db: Database, capacity: Int, names: inout [Int64: String], loader: PayloadDecoder
    ) throws -> RawEventChunk {
        var chunk = RawEventChunk()
        // Point reads ask for a few rows: reserve for at most a scan chunk, growing beyond only when needed.
        let expected = min(capacity, ScanPipeline.chunkRows)
        chunk.rows.reserveCapacity(expected)
        chunk.bytes.reserveCapacity(expected * 160)
        var lastDictionary: (id: Int64, index: Int32)?
        while chunk.rows.count < capacity {
            guard try statement.stepRow(db) else {
                chunk.isLast = true
                break
            }
            let position = statement.int64(at: 0)
            let streamID = statement.int64(at: 1)
            let stream: String
            var dictionary: Int32 = -1
            do {
                if let known = names[streamID] {
                    stream = known
                } else {
                    stream = try EventReader.streamName(streamID, db: db)
                    if names.count >= 65_536 { names.removeAll(keepingCapacity: true) }  // bounded on huge logs
                    names[streamID] = stream
                }
                if let id = statement.optionalInt64(at: 7) {
                    if let last = lastDictionary, last.id == id {
                        dictionary = last.index
                    } else {
                        chunk.dictionaries.append(try loader.loaded(id, db: db))
                        dictionary = Int32(chunk.dictionaries.count - 1)
                        lastDictionary = (id, dictionary)
                    }
                }
            } catch let error as StoreError {
                chunk.failure = RowDecodingError(position: position, error: error)
                chunk.isLast = true
                break
            }
            let idIsBlob = statement.isBlob(at: 3)
            let id = statement.blob(at: 3)
            let type = statement.blob(at: 4)
            let payload = statement.blob(at: 8)
            let hash = statement.blob(at: 9)
            chunk.bytes.append(contentsOf: id)
            chunk.bytes.append(contentsOf: type)
            chunk.bytes.append(contentsOf: payload)
            chunk.bytes.append(contentsOf: hash)
            chunk.rows.append(Row(
                position: position, stream: stream, version: statement.int64(at: 2),
                at: statement.int64(at: 5), recordedAt: statement.int64(at: 6), dictionary: dictionary,
                idIsBlob: idIsBlob, idCount: id.count, typeCount: type.count, payloadCount: payload.count,
                hashCount: hash.count))
        }
        return chunk
    }

    /// The rows as events, in order. A row that cannot be read or decompressed ends the list: the events before
    /// it are returned with its error.
    func decode(with decoder: PayloadDecoder) -> (events: [RecordedEvent], error: RowDecodingError?) {
        var events: [RecordedEvent] = []
        events.reserveCapacity(rows.count)
        var offset = 0
        return bytes.withUnsafeBytes { all in
            func take(_ count: Int) -> UnsafeRawBufferPointer {
                defer { offset += count }
                return UnsafeRawBufferPointer(rebasing: all[offset..<(offset + count)])
            }
            for row in rows {
                let idBytes = take(row.idCount)
                let id = row.idIsBlob ? StoredEventID.format(idBytes) : String(decoding: idBytes, as: UTF8.self)
                let type = String(decoding: take(row.typeCount), as: UTF8.self)
                let payload: [UInt8]
                do {
                    let dictionary = row.dictionary < 0 ? nil : dictionaries[Int(row.dictionary)]
                    payload = try decoder.decompress(take(row.payloadCount), using: dictionary)
                } catch {
                    let storeError = error as? StoreError ?? StoreError(.corruptPayload, "\(error)")
                    return (events, RowDecodingError(position: row.position, error: storeError))
                }
                events.append(RecordedEvent(
                    position: row.position, stream: row.stream, version: row.version, id: id, type: type,
                    at: row.at, recordedAt: row.recordedAt, payload: payload, hash: Array(take(row.hashCount))))
            }
            return (events, failure)
        }
    }
}

/// A row of a scan that cannot be turned into an event: its position and why.
struct RowDecodingError: Error {
    var position: Int64
    var error: StoreError

    /// The error as readers see it, naming the position (as `EventReader.decode` does).
    var storeError: StoreError { StoreError(error.code, "position \(position): \(error.message)") }
}
