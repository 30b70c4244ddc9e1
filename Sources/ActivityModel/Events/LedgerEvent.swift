/// One event of the ledger, as exchanged (JSON Lines, HTTP) and stored.
public struct LedgerEvent: Hashable, Sendable {
    /// Idempotency key; always set once the event is stored.
    public var id: String?
    public var stream: StreamName
    /// Event time: when it happened, not when it was recorded.
    public var at: Instant
    public var source: Source
    public var data: EventData

    public var type: EventType { data.type }

    public init(id: String? = nil, stream: StreamName, at: Instant, source: Source = .server, data: EventData) {
        self.id = id
        self.stream = stream
        self.at = at
        self.source = source
        self.data = data
    }
}

/// A stored event with its global log position.
public struct PositionedEvent: Hashable, Sendable {
    public var position: Int64
    public var event: LedgerEvent

    public init(position: Int64, event: LedgerEvent) {
        self.position = position
        self.event = event
    }
}
