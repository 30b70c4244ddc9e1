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
    /// Stored (compressed) payload bytes of every event.
    public var storedPayloadBytes: Int64
    public var dictionaries: [Dictionary]

    /// File bytes divided by events (0 for an empty store).
    public var bytesPerEvent: Double { events == 0 ? 0 : Double(fileBytes) / Double(events) }
    /// Uncompressed over stored payload bytes (1 when nothing is stored).
    public var compressionRatio: Double {
        storedPayloadBytes == 0 ? 1 : Double(payloadBytes) / Double(storedPayloadBytes)
    }
}
