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
        // The payload is hashed where it lies, not copied after the fields first (a copy of every payload was
        // ~2 % of an import's writer).
        var state = Self.withUTF8(stream, id, type) { stream, id, type in
            prefix(position: position, stream: stream, version: version, id: id, type: type, at: at,
                   recordedAt: recordedAt, payload: payload)
        }
        previous.withUnsafeBytes { state.update(bufferPointer: $0) }
        return state.finalize().withUnsafeBytes { Array($0) }  // not the generic Sequence copy
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
        return event.payload.withUnsafeBytes { payload in
            withUTF8(
                bare ? Namespaced.name(event.stream) : event.stream, bare ? Namespaced.name(event.id) : event.id,
                event.type
            ) { stream, id, type in
                hasher.prefix(
                    position: event.position, stream: stream, version: event.version, id: id, type: type, at: event.at,
                    recordedAt: event.recordedAt, payload: payload)
            }
        }
    }

    /// The same state from fields lent as bytes (texts as UTF-8), reusing this hasher's buffer: how a sealed
    /// segment's hashes are computed straight from its blocks, without building its events.
    package mutating func prefix(
        position: Int64, stream: UnsafeRawBufferPointer, version: Int64, id: UnsafeRawBufferPointer,
        type: UnsafeRawBufferPointer, at: Int64, recordedAt: Int64, payload: UnsafeRawBufferPointer
    ) -> SHA256 {
        fill(position: position, stream: stream, version: version, id: id, type: type, at: at, recordedAt: recordedAt,
             payloadCount: payload.count)
        var state = SHA256()
        buffer.withUnsafeBytes { state.update(bufferPointer: $0) }
        state.update(bufferPointer: payload)  // not copied into the buffer first
        return state
    }

    /// Writes the row's hash from its `prefix` state and the previous row's hash (32 bytes each) into `hash`.
    static func finish(_ prefix: consuming SHA256, previous: UnsafeRawBufferPointer, into hash: UnsafeMutableRawBufferPointer) {
        var state = prefix
        state.update(bufferPointer: previous)
        state.finalize().withUnsafeBytes { hash.copyMemory(from: $0) }
    }

    /// The row's hash from its `prefix` state and the previous row's hash.
    static func finish(_ prefix: SHA256, previous: [UInt8]) -> [UInt8] {
        var hash = [UInt8](repeating: 0, count: 32)
        previous.withUnsafeBytes { previous in
            hash.withUnsafeMutableBytes { finish(prefix, previous: previous, into: $0) }
        }
        return hash
    }

    /// Every field of the layout up to the payload's length, into `buffer` (the payload's bytes and the previous
    /// hash follow): the one home of the field order.
    private mutating func fill(
        position: Int64, stream: UnsafeRawBufferPointer, version: Int64, id: UnsafeRawBufferPointer,
        type: UnsafeRawBufferPointer, at: Int64, recordedAt: Int64, payloadCount: Int
    ) {
        buffer.removeAll(keepingCapacity: true)
        append(position)
        append(text: stream)
        append(version)
        append(text: id)
        append(text: type)
        append(at)
        append(recordedAt)
        withUnsafeBytes(of: UInt32(payloadCount).bigEndian) { buffer.append(contentsOf: $0) }
    }

    private static func withUTF8<R>(
        _ first: String, _ second: String, _ third: String,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> R
    ) -> R {
        var (first, second, third) = (first, second, third)
        return first.withUTF8 { first in
            second.withUTF8 { second in
                third.withUTF8 { third in
                    body(UnsafeRawBufferPointer(first), UnsafeRawBufferPointer(second), UnsafeRawBufferPointer(third))
                }
            }
        }
    }

    private mutating func append(_ value: Int64) {
        withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) }
    }

    /// Its 4-byte big-endian length, then the bytes.
    private mutating func append(text bytes: UnsafeRawBufferPointer) {
        withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { buffer.append(contentsOf: $0) }
        buffer.append(contentsOf: bytes)
    }
}
