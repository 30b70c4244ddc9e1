/// A stored event lent for the length of one call: its id, type and payload are bytes of what is being read (a
/// sealed block's decompressed bytes, or a row's event), valid only inside the call that receives the view. A
/// whole-log scan that keeps little of each event (a rebuild, a count) reads through views
/// (`EventStore.forEachEventView`) and builds no `RecordedEvent`: no strings, arrays or reference counting per
/// event. Views carry no chain hash.
public struct EventView {
    public var position: Int64
    /// The stream's qualified name (one string shared by every event of its block: nothing copied per event).
    public var stream: String
    public var version: Int64
    /// The event id's UTF-8 bytes, qualified as stored.
    public var id: UnsafeRawBufferPointer
    /// The event type's UTF-8 bytes.
    public var type: UnsafeRawBufferPointer
    public var at: Int64
    public var recordedAt: Int64
    /// The uncompressed payload.
    public var payload: UnsafeRawBufferPointer
    /// The array `payload` lies in, when the event was built before it was lent (a row's): a consumer that keeps
    /// part of the payload can keep the array instead of copying the part. Nil for a sealed block's bytes.
    public var payloadOwner: [UInt8]?

    /// The event as a value that outlives the call (its hash left empty: views carry none).
    public func recorded() -> RecordedEvent {
        RecordedEvent(
            position: position, stream: stream, version: version, id: String(decoding: id, as: UTF8.self),
            type: String(decoding: type, as: UTF8.self), at: at, recordedAt: recordedAt, payload: Array(payload),
            hash: [])
    }

    /// `body` with `event` lent as a view (its payload's array as `payloadOwner`).
    public static func lending<T>(_ event: RecordedEvent, _ body: (EventView) throws -> T) rethrows -> T {
        try withBytes(of: event.id) { id in
            try withBytes(of: event.type) { type in
                try event.payload.withUnsafeBytes { payload in
                    try body(EventView(
                        position: event.position, stream: event.stream, version: event.version, id: id, type: type,
                        at: event.at, recordedAt: event.recordedAt, payload: payload, payloadOwner: event.payload))
                }
            }
        }
    }

    /// `body` with the UTF-8 bytes of `text`, in place when it has them contiguous (a native string).
    private static func withBytes<T>(of text: String, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        if let result = try text.utf8.withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        var copy = text
        return try copy.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }
}
