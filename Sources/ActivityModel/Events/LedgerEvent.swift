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
    /// what the door holds to `Identifier`'s NFC and length rules (`attributesType` too: an indexed name).
    public var names: [(field: String, value: String)] {
        var names: [(field: String, value: String)] = [("stream", stream.description)]
        if let id { names.append(("id", id)) }
        switch data {
        case .request(let request):
            names.append(("data.attributesType", request.attributesType))
            if let installation = request.installation { names.append(("data.installation", installation)) }
            if case .channel(let channel) = request.pushType { names.append(("data.pushType.channel", channel)) }
        case .token(let token), .startToken(let token): names.append(("data.token", token.token))
        case .push(let push):
            names.append(("data.refersTo", push.refersTo))
            if let token = push.token { names.append(("data.token", token)) }
            if let channel = push.channel { names.append(("data.channel", channel)) }
        case .subscribe(let subscribe): names.append(("data.activity", subscribe.activity))
        case .reconcile(let reconcile): names.append(("data.run", reconcile.run))
        case .update, .end, .dismiss, .observe: break
        }
        return names
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
