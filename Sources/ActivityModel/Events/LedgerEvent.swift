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

extension LedgerEvent {
    /// The names this event gives or refers to (its id, stream, and the ids in its data), each with its field path:
    /// what the door holds to `Identifier`'s NFC and length rules (`attributesType` too: an indexed name). `body`
    /// gets each (field, value), the stream first; no list is made (every appended event is checked).
    public func forEachName<E: Error>(_ body: (_ field: String, _ value: String) throws(E) -> Void) throws(E) {
        try body("stream", stream.description)
        if let id { try body("id", id) }
        switch data {
        case .request(let request):
            try body("data.attributesType", request.attributesType)
            if let installation = request.installation { try body("data.installation", installation) }
            if case .channel(let channel) = request.pushType { try body("data.pushType.channel", channel) }
        case .token(let token), .startToken(let token): try body("data.token", token.token)
        case .push(let push):
            try body("data.refersTo", push.refersTo)
            if let token = push.token { try body("data.token", token) }
            if let channel = push.channel { try body("data.channel", channel) }
        case .subscribe(let subscribe): try body("data.activity", subscribe.activity)
        case .reconcile(let reconcile): try body("data.run", reconcile.run)
        case .update, .end, .dismiss, .observe: break
        }
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
