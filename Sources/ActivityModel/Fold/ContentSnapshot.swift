/// A content as it appears in `state.displayed` / `state.intended`: the content plus its timestamp.
public struct ContentSnapshot: Hashable, Sendable {
    /// The content state (parsed when read if the content came from a stored payload: `LazyJSON`).
    public var state: JSONValue {
        get { storedState.value }
        set { storedState = LazyJSON(newValue) }
    }
    var storedState: LazyJSON
    /// APNs `timestamp` (Unix seconds); for the request's content, the request's `at` in whole seconds.
    public var timestamp: Int64
    public var staleDate: Instant?
    public var relevanceScore: Double?
    /// The event that carried it.
    public var event: String?

    public init(state: JSONValue, timestamp: Int64, staleDate: Instant?, relevanceScore: Double?, event: String?) {
        self.init(
            storedState: LazyJSON(state), timestamp: timestamp, staleDate: staleDate, relevanceScore: relevanceScore,
            event: event)
    }

    init(storedState: LazyJSON, timestamp: Int64, staleDate: Instant?, relevanceScore: Double?, event: String?) {
        self.storedState = storedState
        self.timestamp = timestamp
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
        self.event = event
    }

    init(_ content: ActivityContent, timestamp: Int64, event: String?) {
        self.init(
            storedState: content.storedState, timestamp: timestamp, staleDate: content.staleDate,
            relevanceScore: content.relevanceScore, event: event)
    }

    /// `ActivityContent.hash(of:)` of the state.
    public var contentHash: String { ActivityContent.hash(of: storedState) }

    /// SPEC §7 shape: `{"state","timestamp","staleDate","relevanceScore"}` with nulls written, plus `event`.
    public var json: JSONValue {
        .object([
            "state": state,
            "timestamp": .int(timestamp),
            "staleDate": staleDate.map { .string($0.rfc3339) } ?? .null,
            "relevanceScore": relevanceScore.map { .double($0) } ?? .null,
            "event": event.map { .string($0) } ?? .null,
        ])
    }

    init?(json: JSONValue) {
        guard let state = json["state"], let timestamp = json["timestamp"]?.numberValue?.int64Value else {
            return nil
        }
        self.init(
            state: state, timestamp: timestamp, staleDate: json["staleDate"]?.stringValue.flatMap(Instant.init(rfc3339:)),
            relevanceScore: json["relevanceScore"]?.numberValue?.doubleValue, event: json["event"]?.stringValue)
    }
}
