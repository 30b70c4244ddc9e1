/// SPEC §4 verdict of one (update or end, activity) pair.
public enum Verdict: String, Hashable, Sendable, Codable, CaseIterable {
    case applied, superseded, accepted, rejected, pending, lost
}

/// One element of the SPEC §7 `audit.deliveries`: an update or end as it concerns one activity.
public struct Delivery: Hashable, Sendable {
    /// The update/end event id.
    public var event: String
    public var type: EventType
    public var timestamp: Int64
    public var verdict: Verdict
    /// Only for `rejected`: `payloadTooLarge`, `futureTimestamp`, `afterEnd`, `deadToken` or the APNs reason.
    public var reason: String?
    // Extra fields: where it came from and the evidence.
    public var activity: String
    public var at: Instant
    public var position: Int64
    /// The channel it came through, for broadcast updates.
    public var channel: String?
    /// Ids of the push events that carried it, in `at` order.
    public var pushes: [String]
    /// Id of the push that decided the verdict (the accepted one, or the failure whose reason is given).
    public var decidingPush: String?
    /// Id of the device observation that decided `applied` or `lost`.
    public var observation: String?
    /// Ids of pushes that went to a token a newer token had already replaced (flagged, SPEC §1).
    public var pushesToSupersededToken: [String] = []

    public init(
        event: String, type: EventType, timestamp: Int64, verdict: Verdict, reason: String?, activity: String,
        at: Instant, position: Int64, channel: String?, pushes: [String], decidingPush: String?, observation: String?
    ) {
        self.event = event
        self.type = type
        self.timestamp = timestamp
        self.verdict = verdict
        self.reason = reason
        self.activity = activity
        self.at = at
        self.position = position
        self.channel = channel
        self.pushes = pushes
        self.decidingPush = decidingPush
        self.observation = observation
    }

    /// SPEC §7 element: `{"event","type","timestamp","verdict","reason"}` (reason null unless rejected) + evidence.
    public var json: JSONValue {
        .object([
            "event": .string(event),
            "type": .string(type.rawValue),
            "timestamp": .int(timestamp),
            "verdict": .string(verdict.rawValue),
            "reason": reason.map { .string($0) } ?? .null,
            "activity": .string(activity),
            "at": .string(at.rfc3339),
            "position": .int(position),
            "channel": channel.map { .string($0) } ?? .null,
            "pushes": .array(pushes.map { .string($0) }),
            "decidingPush": decidingPush.map { .string($0) } ?? .null,
            "observation": observation.map { .string($0) } ?? .null,
            "pushesToSupersededToken": .array(pushesToSupersededToken.map { .string($0) }),
        ])
    }

    public init?(json: JSONValue) {
        guard let event = json["event"]?.stringValue,
            let type = json["type"]?.stringValue.flatMap(EventType.init(rawValue:)),
            let timestamp = json["timestamp"]?.numberValue?.int64Value,
            let verdict = json["verdict"]?.stringValue.flatMap(Verdict.init(rawValue:))
        else { return nil }
        self.init(
            event: event, type: type, timestamp: timestamp, verdict: verdict, reason: json["reason"]?.stringValue,
            activity: json["activity"]?.stringValue ?? "",
            at: json["at"]?.stringValue.flatMap(Instant.init(rfc3339:)) ?? Instant(milliseconds: 0),
            position: json["position"]?.numberValue?.int64Value ?? 0, channel: json["channel"]?.stringValue,
            pushes: json["pushes"]?.arrayValue?.compactMap(\.stringValue) ?? [],
            decidingPush: json["decidingPush"]?.stringValue, observation: json["observation"]?.stringValue)
        self.pushesToSupersededToken = json["pushesToSupersededToken"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }
}

extension Delivery: Codable {
    public init(from decoder: any Decoder) throws {
        guard let delivery = Delivery(json: try JSONValue(from: decoder)) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a delivery"))
        }
        self = delivery
    }

    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}
