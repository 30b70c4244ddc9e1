import Crypto

/// Computes the SHA-256 chain hash of one row; the byte layout is documented in Schemas/sql/README.md.
///
/// Every integer is 8 bytes big-endian, every text or byte string is its 4-byte big-endian length then its
/// bytes (texts as UTF-8), then the previous row's 32-byte hash (32 zero bytes before position 1).
package struct ChainHasher {
    package static let genesis = [UInt8](repeating: 0, count: 32)
    private var buffer: [UInt8] = []

    package init() {}

    package mutating func hash(
        position: Int64, stream: String, version: Int64, id: String, type: String, at: Int64, recordedAt: Int64,
        payload: UnsafeRawBufferPointer, previous: [UInt8]
    ) -> [UInt8] {
        buffer.removeAll(keepingCapacity: true)
        append(position)
        append(stream)
        append(version)
        append(id)
        append(type)
        append(at)
        append(recordedAt)
        append(UInt32(payload.count))
        buffer.append(contentsOf: payload)
        buffer.append(contentsOf: previous)
        return SHA256.hash(data: buffer).withUnsafeBytes { Array($0) }  // not the generic Sequence copy
    }

    /// `event`'s hash after `previous`, reusing this hasher's buffer; positions before `namespacedFrom` hash the
    /// bare stream name and id (see `prefix`).
    package mutating func hash(_ event: RecordedEvent, namespacedFrom: Int64, previous: [UInt8]) -> [UInt8] {
        let bare = event.position < namespacedFrom
        return event.payload.withUnsafeBytes { payload in
            hash(
                position: event.position, stream: bare ? Namespaced.name(event.stream) : event.stream,
                version: event.version, id: bare ? Namespaced.name(event.id) : event.id, type: event.type, at: event.at,
                recordedAt: event.recordedAt, payload: payload, previous: previous)
        }
    }

    /// The SHA-256 state after every field of a row but the previous hash, which comes last: `verify` computes it
    /// beside the reading (any thread) and only `finish`es it in chain order.
    ///
    /// Rows before `namespacedFrom` were hashed before apps were namespaces: their hash covers the bare stream
    /// name and id (`Namespaced`), though the file now stores them qualified by their app.
    package static func prefix(_ event: RecordedEvent, namespacedFrom: Int64) -> SHA256 {
        let bare = event.position < namespacedFrom
        var hasher = ChainHasher()
        hasher.append(event.position)
        hasher.append(bare ? Namespaced.name(event.stream) : event.stream)
        hasher.append(event.version)
        hasher.append(bare ? Namespaced.name(event.id) : event.id)
        hasher.append(event.type)
        hasher.append(event.at)
        hasher.append(event.recordedAt)
        hasher.append(UInt32(event.payload.count))
        hasher.buffer.append(contentsOf: event.payload)
        var state = SHA256()
        state.update(data: hasher.buffer)
        return state
    }

    /// The row's hash from its `prefix` state and the previous row's hash.
    static func finish(_ prefix: SHA256, previous: [UInt8]) -> [UInt8] {
        var state = prefix
        state.update(data: previous)
        return state.finalize().withUnsafeBytes { Array($0) }
    }

    private mutating func append(_ value: Int64) {
        withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) }
    }

    private mutating func append(_ value: UInt32) {
        withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) }
    }

    private mutating func append(_ text: String) {
        let utf8 = text.utf8
        append(UInt32(utf8.count))
        buffer.append(contentsOf: utf8)
    }
}
