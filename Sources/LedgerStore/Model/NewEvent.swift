/// An event to append. The store treats every field as opaque.
public struct NewEvent: Sendable, Hashable {
    /// Idempotency key: re-sending it returns the original position.
    public var id: String
    /// Stream name, e.g. `activity:RIDE-8812`.
    public var stream: String
    public var type: String
    /// Event time, Unix milliseconds.
    public var at: Int64
    /// Unix milliseconds; nil means "now" (replays pass the original).
    public var recordedAt: Int64?
    /// Opaque bytes, stored zstd-compressed.
    public var payload: [UInt8]
    /// `payload` already compressed off the writer (see `EventStore.makePrecompressor()`).
    package var precompressed: PrecompressedPayload?
    /// Handed to the inline projector with the row written from this event; never stored (`ProjectorInput`).
    public var projectorInput = ProjectorInput(nil)

    public init(id: String, stream: String, type: String, at: Int64, recordedAt: Int64? = nil, payload: [UInt8]) {
        self.id = id
        self.stream = stream
        self.type = type
        self.at = at
        self.recordedAt = recordedAt
        self.payload = payload
    }
}

/// Optimistic concurrency: the version of the last event of a stream before the batch.
public enum ExpectedVersion: Sendable, Hashable {
    case any
    /// The stream has no event yet (same as `.exact(0)`).
    case noStream
    case exact(Int64)

    /// The stream version the batch requires before it (0: no stream), nil for `.any`.
    public var version: Int64? {
        switch self {
        case .any: nil
        case .noStream: 0
        case .exact(let version): version
        }
    }
}

/// Events appended atomically, with optional expected versions per stream.
public struct AppendBatch: Sendable {
    public var events: [NewEvent]
    public var expected: [String: ExpectedVersion]

    public init(events: [NewEvent], expected: [String: ExpectedVersion] = [:]) {
        self.events = events
        self.expected = expected
    }
}

/// What an append did, one entry per input event.
public struct AppendResult: Sendable, Hashable {
    /// Position of each event; for a re-sent id, its original position.
    public var positions: [Int64]
    /// True where the id existed already with identical content (nothing new written for it).
    public var duplicate: [Bool]
    /// The stream version of each event (for a re-sent id, the original one).
    public var versions: [Int64]

    public init(positions: [Int64], duplicate: [Bool], versions: [Int64] = []) {
        self.positions = positions
        self.duplicate = duplicate
        self.versions = versions
    }
}

/// An event as stored.
public struct RecordedEvent: Sendable, Hashable {
    public var position: Int64
    public var stream: String
    public var version: Int64
    public var id: String
    public var type: String
    public var at: Int64
    public var recordedAt: Int64
    /// Decompressed payload.
    public var payload: [UInt8]
    /// SHA-256 chain hash of this row (32 bytes).
    public var hash: [UInt8]

    public init(
        position: Int64, stream: String, version: Int64, id: String, type: String, at: Int64, recordedAt: Int64,
        payload: [UInt8], hash: [UInt8]
    ) {
        self.position = position
        self.stream = stream
        self.version = version
        self.id = id
        self.type = type
        self.at = at
        self.recordedAt = recordedAt
        self.payload = payload
        self.hash = hash
    }
}
