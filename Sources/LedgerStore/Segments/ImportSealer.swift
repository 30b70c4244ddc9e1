import GRDB

/// An import into a log with no rows writes whole segments itself, instead of rows that sealing reads back,
/// checks, compresses and deletes (Schemas/sql/README.md, "Imports seal as they go").
///
/// The import transaction hands every new event here (`hold`) instead of inserting a row. Each time
/// `segmentEvents` of them are held and the first dictionary is trained, they are compressed into a segment,
/// exactly as `seal` would have, in the same transaction. While the first dictionary trains on its thread, events
/// are held up to `dictionaryWait`; then the import waits for it (`ImportSession.append`), and seals without one
/// only when none is coming. Their ids are filed in `SealedIDs.Pending` in memory and written to the buckets' rows at
/// the end (or whenever they pass `StoreConfiguration.importFiledBytes`, after which lookups of ids the import may
/// have filed ask the file too). The events after the last whole segment become rows at the end (`finish`), so
/// appends that follow find a short tail of rows, as after `seal` beside `serve`.
///
/// So the import writes no row, no row index entry and no per-row zstd frame for the sealed part: random B-tree
/// writes of the id index were most of the writer's SQLite time (BENCHMARKS.md, session 39). The transaction is
/// still one: a refused line or a crash keeps nothing. A re-sent id is found among the held events, in the pending
/// entries (decoding the blocks they name, which are in this transaction), and in the file's buckets when the
/// file had segments before; an id whose `SealedIDs.Filter` bit is clear was not held or filed by the import.
final class ImportSealer {
    private let segmentEvents: Int
    /// Pending entries are written to the file once they pass this (`StoreConfiguration.importFiledBytes`).
    private let maximumFiledBytes: Int
    private let dictionaryWait: Int
    private let compressor: SegmentCompressor
    /// The file had sealed events before the import: every lookup asks its buckets.
    private let fileHadSealed: Bool
    /// Some of this import's entries were written to the file already: lookups of ids it may have filed ask the
    /// file too.
    private var wroteFiled = false
    /// Every id held or filed by the import.
    private var seen = SealedIDs.Filter()
    private var held: [RecordedEvent] = []
    private var heldStreams: [Int64] = []
    /// Each held id's SHA-256 bits, which it is filed under.
    private var heldHashes: [SealedIDs.Hash] = []
    private var heldIDs: [TransactionState.ExactName: Int] = [:]
    /// The chain hash before `held[0]`.
    private var previousHash: [UInt8]
    private var filed = SealedIDs.Pending()

    init(configuration: StoreConfiguration, state: TransactionState) {
        segmentEvents = configuration.segmentEvents
        heldIDs.reserveCapacity(2 * segmentEvents)
        maximumFiledBytes = configuration.importFiledBytes
        dictionaryWait = configuration.firstDictionaryAfter + 2 * configuration.segmentEvents
        compressor = SegmentCompressor(level: configuration.sealLevel)
        fileHadSealed = state.anySealed
        previousHash = state.lastHash
    }

    /// The stored or held event with this id, if any (a re-sent id).
    func find(_ id: String, db: Database, reader: EventReader) throws -> RecordedEvent? {
        try find(id, hash: SealedIDs.Hash(id), db: db, reader: reader)
    }

    /// `find` with the id's bits computed by the caller, who hands them to `hold` (one SHA-256 per id).
    func find(_ id: String, hash: SealedIDs.Hash, db: Database, reader: EventReader) throws -> RecordedEvent? {
        let mine = seen.mayHave(hash)
        if mine, let index = heldIDs[TransactionState.ExactName(name: id)] { return held[index] }
        var blocks = mine ? try filed.candidates(hash) : []
        if fileHadSealed || (wroteFiled && mine) { blocks += try SealedIDs.candidateBlocks(db, id: id) }
        guard !blocks.isEmpty else { return nil }
        return try reader.sealedEvent(db, id: id, inBlocks: Array(Set(blocks)).sorted(), hashes: false)
    }

    /// Takes a new event (its id, whose bits are `hash`, not found by `find`) of the stream interned as `stream`.
    func hold(_ event: consuming RecordedEvent, hash: SealedIDs.Hash, stream: Int64, state: inout TransactionState) {
        heldIDs[TransactionState.ExactName(name: event.id)] = held.count
        seen.insert(hash)
        heldHashes.append(hash)
        heldStreams.append(stream)
        state.heldVersions[stream] = event.version
        held.append(event)
    }

    /// The last `count` events held (a batch's new events, read by the projector where they lie).
    func heldTail(_ count: Int) -> ArraySlice<RecordedEvent> { held[(held.count - count)...] }

    var heldCount: Int { held.count }

    /// Whether `dictionaryWait` events are held: the first dictionary should be there by now.
    var waitedForDictionary: Bool { held.count >= dictionaryWait }

    /// Writes a segment of each `segmentEvents` events held, once the first dictionary is there (or the wait for
    /// it is over).
    func sealIfDue(_ db: Database, state: inout TransactionState, dictionaryReady: Bool) throws {
        while held.count >= segmentEvents, dictionaryReady || held.count >= dictionaryWait {
            try sealSegment(db, count: segmentEvents, state: &state)
        }
    }

    /// Seals every whole segment held, then makes rows of the rest (`insertRow` inserts one and returns its stored
    /// payload bytes) and writes the filed ids to the file.
    func finish(
        _ db: Database, state: inout TransactionState, insertRow: (RecordedEvent, Int64) throws -> Int
    ) throws {
        try sealIfDue(db, state: &state, dictionaryReady: true)
        for (event, stream) in zip(held, heldStreams) {
            state.storedPayloadBytes += Int64(try insertRow(event, stream))
        }
        held = []
        heldStreams = []
        heldHashes = []
        heldIDs = [:]
        state.heldVersions = [:]
        try filed.write(db)
    }

    private func sealSegment(_ db: Database, count: Int, state: inout TransactionState) throws {
        let events = Array(held[..<count])
        let dictionary = try compressor.useNewest(db)
        let built = try BuiltSegment(
            events: events, streams: Array(heldStreams[..<count]), previousHash: previousHash, dictionary: dictionary,
            compressor: compressor, target: events[count - 1].position)
        guard let firstBlock = try built.write(db, replacingRows: false) else {
            throw StoreError(.schema, "position \(built.first) is not the next one to seal")
        }
        for index in 0..<count {
            filed.add(heldHashes[index], block: firstBlock + Int64(built.blockOfEvent[index]))
        }
        previousHash = built.lastHash
        held.removeFirst(count)
        heldStreams.removeFirst(count)
        heldHashes.removeFirst(count)
        heldIDs.removeAll(keepingCapacity: true)
        state.heldVersions.removeAll(keepingCapacity: true)
        for index in held.indices {
            heldIDs[TransactionState.ExactName(name: held[index].id)] = index
            state.heldVersions[heldStreams[index]] = held[index].version
        }
        if filed.bytes > maximumFiledBytes {
            try filed.write(db)
            wroteFiled = true
        }
    }
}

@available(*, unavailable)
extension ImportSealer: Sendable {}
