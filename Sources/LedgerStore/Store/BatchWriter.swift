import Foundation
import GRDB
import GRDBSQLite

/// Writes one `AppendBatch` inside its own savepoint: checks, compresses, hashes, inserts, projects.
package struct BatchWriter {
    let context: WriterContext
    let encoder: PayloadEncoder
    let projector: (any InlineProjector)?
    let reader: EventReader
    /// Set for an import that seals as it goes: new events are held there for its next segment, not inserted.
    var sealer: ImportSealer? = nil

    static let insertSQL = """
        INSERT INTO events(position, stream, version, id, type, at, recorded_at, dictionary, payload, hash)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    /// Appends `batch`; on any error nothing of it is written and `state` is as before.
    ///
    /// - Parameter withoutSavepoint: the caller rolls the whole transaction back if this throws, so the batch needs
    ///   no savepoint of its own, whose sub-journal copies the original of every page the batch changes (for a
    ///   batch of thousands of events, a page per event to a temporary file).
    func append(_ batch: AppendBatch, db: Database, state: inout TransactionState, withoutSavepoint: Bool = false)
        throws -> AppendResult
    {
        try Self.validate(batch)
        let saved = state
        var result = AppendResult(positions: [], duplicate: [])
        var payloads: [[UInt8]] = []
        do {
            try Self.inSavepoint(db, unless: withoutSavepoint) {
                if let duplicates = try checkExpectedVersions(batch, db: db, state: &state) {
                    result = duplicates
                    return
                }
                var written: [RecordedEvent] = []
                var inputs: [ProjectorInput] = []
                if sealer == nil { written.reserveCapacity(batch.events.count) }
                inputs.reserveCapacity(batch.events.count)
                // Borrowed from the array: an element borrowed from an unsafe buffer was copied whole (a retain and
                // a release of each field) before each call that might write its memory.
                for index in batch.events.indices
                where try insert(batch.events[index], db: db, state: &state, result: &result, written: &written) {
                    inputs.append(batch.events[index].projectorInput)
                    payloads.append(batch.events[index].payload)
                }
                // An import that seals holds the batch's new events, the last it holds: the projector reads them
                // there, not from copies (each copy of an event retained and released its every field).
                let new = sealer.map { $0.heldTail(inputs.count) } ?? written[...]
                if let projector, !new.isEmpty { try projector.apply(new, inputs: inputs, db: db) }
            }
        } catch {
            // Keep the counters and tail, but drop cached stream slots: ids created in the savepoint are gone.
            state = TransactionState(
                lastPosition: saved.lastPosition, lastHash: saved.lastHash, streams: [:],
                payloadBytes: saved.payloadBytes, storedPayloadBytes: saved.storedPayloadBytes,
                anySealed: saved.anySealed)
            throw error
        }
        context.didWrite(payloads)
        return result
    }

    /// Runs `body` in a savepoint of the enclosing transaction, rolled back if it throws. GRDB's `inSavepoint`
    /// parses its SAVEPOINT and RELEASE statements every time (~6 % of the writer under single-event appends);
    /// these are cached, and still go through GRDB, which keeps track of savepoints.
    static func inSavepoint(_ db: Database, unless skipped: Bool = false, _ body: () throws -> Void) throws {
        if skipped { return try body() }
        try db.cachedStatement(sql: "SAVEPOINT ledger_batch").execute()
        do {
            try body()
        } catch {
            try db.cachedStatement(sql: "ROLLBACK TO SAVEPOINT ledger_batch").execute()
            try db.cachedStatement(sql: "RELEASE SAVEPOINT ledger_batch").execute()
            throw error
        }
        try db.cachedStatement(sql: "RELEASE SAVEPOINT ledger_batch").execute()
    }

    /// What every backend refuses in a batch before touching the log.
    package static func validate(_ batch: AppendBatch) throws {
        // No array per event (a list of three (field, text) pairs was made for each) and NUL found with `memchr`.
        try batch.events.withUnsafeBufferPointer { events in
            for index in events.indices {
                if events[index].id.isEmpty {
                    throw StoreError(
                        .invalidEvent, "event \(index + 1) of the batch has an empty id", stream: events[index].stream)
                }
                if events[index].stream.isEmpty {
                    throw StoreError(
                        .invalidEvent, "event \(index + 1) of the batch has an empty stream", eventID: events[index].id)
                }
                // SQLite keeps text up to its first NUL: such a name would be stored cut and its hash would not verify.
                // The fields are read in place: passing the event copied it, retaining and releasing every field.
                let field =
                    hasNUL(events[index].id) ? "id" : hasNUL(events[index].stream) ? "stream"
                    : hasNUL(events[index].type) ? "type" : nil
                if let field {
                    throw StoreError(
                        .invalidEvent, "event \(index + 1) of the batch has a NUL character in its \(field)")
                }
            }
        }
    }

    private static func hasNUL(_ text: String) -> Bool {
        let found = text.utf8.withContiguousStorageIfAvailable { utf8 in
            utf8.baseAddress.map { memchr($0, 0, utf8.count) != nil } ?? false
        }
        return found ?? text.utf8.contains(0)
    }

    /// Throws a version conflict, unless every event of the batch is already stored identically (a retried
    /// batch), in which case it returns their original positions.
    private func checkExpectedVersions(
        _ batch: AppendBatch, db: Database, state: inout TransactionState
    ) throws -> AppendResult? {
        for (stream, expected) in batch.expected.sorted(by: { $0.key < $1.key }) {
            guard let wanted = expected.version else { continue }
            let actual = try state.slot(stream, db: db, create: false)?.version ?? 0
            guard actual != wanted else { continue }
            if let retried = try allStored(batch, db: db) { return retried }
            throw StoreError.versionConflict(stream: stream, expected: expected, actual: actual)
        }
        return nil
    }

    private func allStored(_ batch: AppendBatch, db: Database) throws -> AppendResult? {
        guard !batch.events.isEmpty else { return nil }
        var result = AppendResult(positions: [], duplicate: [])
        for event in batch.events {
            guard let stored = try storedEvent(db, id: event.id),
                Self.sameContent(stored, event)
            else { return nil }
            result.positions.append(stored.position)
            result.duplicate.append(true)
            result.versions.append(stored.version)
        }
        return result
    }

    /// A re-sent id: a no-op when the content is the stored event's, else an id conflict.
    package static func repeated(_ existing: RecordedEvent, _ event: NewEvent, result: inout AppendResult) throws {
        guard sameContent(existing, event) else {
            throw StoreError(
                .idConflict,
                "event id '\(event.id)' is already stored at position \(existing.position) with different content",
                stream: event.stream, eventID: event.id)
        }
        result.positions.append(existing.position)
        result.duplicate.append(true)
        result.versions.append(existing.version)
    }

    package static func sameContent(_ stored: RecordedEvent, _ event: NewEvent) -> Bool {
        stored.stream == event.stream && stored.type == event.type && stored.at == event.at
            && stored.payload == event.payload
    }

    /// The event stored (or held by the import's sealer) with this id.
    func storedEvent(_ db: Database, id: String) throws -> RecordedEvent? {
        if let sealer { return try sealer.find(id, db: db, reader: reader) }
        return try reader.event(db, id: id)
    }

    /// Inserts one event (appending it to `written`, or handing it to the import's sealer), or records it as a
    /// duplicate of the stored one. True when the event is new.
    private func insert(
        _ event: borrowing NewEvent, db: Database, state: inout TransactionState, result: inout AppendResult,
        written: inout [RecordedEvent]
    ) throws -> Bool {
        var idHash: SealedIDs.Hash?
        if let sealer {
            // No rows: every id the log holds is sealed, held, or filed by this import.
            let hash = SealedIDs.Hash(event.id)
            if let existing = try sealer.find(event.id, hash: hash, db: db, reader: reader) {
                try Self.repeated(existing, event, result: &result)
                return false
            }
            idHash = hash
        } else if state.anySealed, let existing = try reader.sealedEvent(db, id: event.id) {
            // The unique index covers rows only: an id of a sealed event is looked up in the segments' id keys.
            try Self.repeated(existing, event, result: &result)
            return false
        }
        guard let slotIndex = try state.slotIndex(event.stream, db: db, create: true) else { return false }
        let slot = state.streams.values[slotIndex]
        let position = state.lastPosition + 1
        let version = slot.version + 1
        let recordedAt = event.recordedAt ?? Int64(Date().timeIntervalSince1970 * 1000)
        let (stream, id, type, at, previous) = (event.stream, event.id, event.type, event.at, state.lastHash)
        let hash = event.payload.withUnsafeBytes { payload in
            context.hasher.hash(
                position: position, stream: stream, version: version, id: id, type: type, at: at,
                recordedAt: recordedAt, payload: payload, previous: previous)
        }
        let recorded = RecordedEvent(
            position: position, stream: event.stream, version: version, id: event.id, type: event.type, at: event.at,
            recordedAt: recordedAt, payload: event.payload, hash: hash)
        if let sealer, let idHash {
            sealer.hold(recorded, hash: idHash, stream: slot.id, state: &state)
        } else {
            let stored = try encoder.compress(event)
            do {
                try insertRow(recorded, stream: slot.id, stored: stored, db: db)
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                guard let existing = try reader.event(db, id: event.id) else { throw error }
                try Self.repeated(existing, event, result: &result)
                return false
            }
            state.storedPayloadBytes += Int64(stored.count)
            written.append(recorded)
        }
        state.streams.values[slotIndex].version = version
        state.lastPosition = position
        state.lastHash = hash
        state.payloadBytes += Int64(event.payload.count)
        result.positions.append(position)
        result.duplicate.append(false)
        result.versions.append(version)
        return true
    }

    /// Inserts `event`'s row (`stream`: its stream's interned id; `stored`: its compressed payload).
    func insertRow(_ event: RecordedEvent, stream: Int64, stored: [UInt8], db: Database) throws {
        let statement = try db.cachedStatement(sql: Self.insertSQL)
        defer { statement.resetBindings() }
        statement.bind(event.position, at: 1)
        statement.bind(stream, at: 2)
        statement.bind(event.version, at: 3)
        statement.bind(StoredEventID(event.id), at: 4)
        statement.bind(event.type, at: 5)
        statement.bind(event.at, at: 6)
        statement.bind(event.recordedAt, at: 7)
        statement.bind(encoder.dictionaryID, at: 8)
        statement.bind(stored, at: 9)
        statement.bind(event.hash, at: 10)
        _ = try statement.stepRow(db)
    }
}
