import Foundation
import GRDB

/// What one write transaction knows about the tail of the log, kept in memory between its batches.
struct TransactionState {
    struct StreamSlot {
        var id: Int64
        var version: Int64
    }

    var lastPosition: Int64
    var lastHash: [UInt8]
    /// A stream name compared and hashed by its UTF-8 bytes, as the `streams` table compares it. Swift's `String`
    /// equality is canonical equivalence: keyed by `String`, "é" as one scalar and "e" + U+0301 were one slot, so
    /// the second name's event went into the first one's stream while its hash covered its own name, and `verify`
    /// failed (the doors now take names in NFC only; this keeps the writer right whatever reaches it).
    struct ExactName: Hashable {
        let name: String

        static func == (lhs: ExactName, rhs: ExactName) -> Bool {
            let (left, right) = (lhs.name.utf8, rhs.name.utf8)
            guard left.count == right.count else { return false }
            // Every appended event looks its stream up here: compare the bytes in place, not one by one.
            let same = left.withContiguousStorageIfAvailable { left in
                right.withContiguousStorageIfAvailable { right in
                    left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
                }
            }
            return (same ?? nil) ?? left.elementsEqual(right)
        }

        func hash(into hasher: inout Hasher) {
            let hashed = name.utf8.withContiguousStorageIfAvailable {
                hasher.combine(bytes: UnsafeRawBufferPointer($0))
            }
            if hashed == nil {
                var name = name
                name.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            }
        }
    }

    /// Streams touched in this transaction; bounded so a huge import does not grow it forever.
    var streams: [ExactName: StreamSlot] = [:]
    var payloadBytes: Int64 = 0
    var storedPayloadBytes: Int64 = 0
    /// Whether any segment exists (ids of sealed events are not in the rows' unique index).
    var anySealed = false
    /// Each stream's last version among the events an import holds in memory for its next segment
    /// (`ImportSealer`): not in the file yet, so a slot loaded again after `streams` was emptied takes it from here.
    var heldVersions: [Int64: Int64] = [:]

    static func load(_ db: Database) throws -> TransactionState {
        // Cached statements: every group commit runs these, and parsing them each time was ~2 % of the writer.
        let tail = try db.cachedStatement(sql: "SELECT position, hash FROM events ORDER BY position DESC LIMIT 1")
        defer { tail.resetBindings() }
        let sealedThrough = try EventReader.sealedThrough(db)
        let anySealed = sealedThrough > 0
        // A row at or before the last segment's end is dead (sealed, not deleted yet): the tail is the segment's.
        if try tail.stepRow(db), tail.int64(at: 0) > sealedThrough {
            return TransactionState(
                lastPosition: tail.int64(at: 0), lastHash: Array(tail.blob(at: 1)), anySealed: anySealed)
        }
        // Every event is sealed: the tail is the last segment's.
        let sealed = try db.cachedStatement(
            sql: "SELECT last_position, last_hash FROM segments ORDER BY first_position DESC LIMIT 1")
        defer { sealed.resetBindings() }
        if try sealed.stepRow(db) {
            return TransactionState(
                lastPosition: sealed.int64(at: 0), lastHash: Array(sealed.blob(at: 1)), anySealed: true)
        }
        return TransactionState(lastPosition: 0, lastHash: ChainHasher.genesis)
    }

    /// Adds this transaction's payload totals to the counters (same transaction).
    func saveCounters(_ db: Database) throws {
        guard payloadBytes != 0 || storedPayloadBytes != 0 else { return }
        try db.cachedStatement(
            sql: """
                UPDATE store_counters SET value = value + CASE name WHEN 'payload_bytes' THEN ? ELSE ? END
                WHERE name IN ('payload_bytes', 'stored_payload_bytes')
                """
        ).execute(arguments: [payloadBytes, storedPayloadBytes])
    }

    typealias SlotIndex = Dictionary<ExactName, StreamSlot>.Index

    /// The stream's interned id and current version (0 = no event), creating the name row when `create`.
    mutating func slot(_ name: String, db: Database, create: Bool) throws -> StreamSlot? {
        try slotIndex(name, db: db, create: create).map { streams.values[$0] }
    }

    /// Where `slot` keeps the stream's slot: `streams.values[index]`, valid until `streams` next gets a key (an
    /// append reads and advances its stream's version there with one lookup, not two).
    mutating func slotIndex(_ name: String, db: Database, create: Bool) throws -> SlotIndex? {
        if let index = streams.index(forKey: ExactName(name: name)) { return index }
        if streams.count > 50_000 { streams.removeAll(keepingCapacity: true) }
        let find = try db.cachedStatement(sql: "SELECT id FROM streams WHERE name = ?")
        find.bind(name, at: 1)
        defer { find.resetBindings() }
        var slot: StreamSlot
        if try find.stepRow(db) {
            let id = find.int64(at: 0)
            let stored = try EventReader.lastVersion(stream: id, db: db) ?? 0
            slot = StreamSlot(id: id, version: max(stored, heldVersions[id] ?? 0))
        } else if create {
            let insert = try db.cachedStatement(sql: "INSERT INTO streams(name) VALUES (?)")
            insert.bind(name, at: 1)
            defer { insert.resetBindings() }
            _ = try insert.stepRow(db)
            slot = StreamSlot(id: db.lastInsertedRowID, version: 0)
        } else {
            return nil
        }
        let key = ExactName(name: name)
        streams[key] = slot
        return streams.index(forKey: key)
    }
}
