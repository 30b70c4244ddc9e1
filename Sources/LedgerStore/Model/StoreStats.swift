/// Size and compression figures of a store.
public struct StoreStats: Sendable, Hashable {
    /// One trained zstd dictionary.
    public struct Dictionary: Sendable, Hashable {
        public var id: Int64
        public var bytes: Int
        /// First position compressed with it.
        public var firstPosition: Int64
        public var createdAt: Int64
    }

    public var events: Int64
    public var streams: Int64
    /// Bytes of the database file plus its WAL.
    public var fileBytes: Int64
    /// Uncompressed payload bytes of every event.
    public var payloadBytes: Int64
    /// Stored (compressed) payload bytes of the events that are still rows.
    public var storedPayloadBytes: Int64
    public var dictionaries: [Dictionary]
    /// Events in sealed segments (positions 1 … `sealedEvents`); the rest are rows.
    public var sealedEvents: Int64 = 0
    public var segments: Int64 = 0
    /// Stored bytes of the segments: compressed blocks (every field of their events) and check values.
    public var sealedBytes: Int64 = 0

    public var unsealedEvents: Int64 { events - sealedEvents }

    /// File bytes divided by events (0 for an empty store).
    public var bytesPerEvent: Double { events == 0 ? 0 : Double(fileBytes) / Double(events) }
    /// Uncompressed payload bytes over what stores them: row payloads plus sealed segments (1 when nothing is
    /// stored). Segments also hold their events' ids, types and times, so this understates their compression.
    public var compressionRatio: Double {
        let stored = storedPayloadBytes + sealedBytes
        return stored == 0 ? 1 : Double(payloadBytes) / Double(stored)
    }
}
