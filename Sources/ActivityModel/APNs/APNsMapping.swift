/// APNs both ways: a raw `liveactivity` request and its response become ledger events, and ledger content
/// becomes a valid `aps` payload.
///
/// Dates are explicit integers of Unix seconds (`timestamp`, `stale-date`, `dismissal-date`). Content-state is
/// passed through untouched: dates inside it are the app's business (see the 2001-epoch warning in
/// reference/apns-liveactivity-facts.md), so the ledger never re-encodes them.
public enum APNsMapping: Sendable {
    /// Parses `{"aps": {…}}` (or a bare `aps` dictionary).
    public static func parse(_ bytes: some Collection<UInt8>) throws(EventDecodingError) -> APSPayload {
        try parse(try EventCodec.parse(bytes))
    }

    public static func parse(_ body: JSONValue) throws(EventDecodingError) -> APSPayload {
        let aps: FieldReader
        if body["aps"] != nil {
            aps = try FieldReader(body, path: "").object("aps")
        } else {
            aps = try FieldReader(body, path: "aps")
        }
        let event = try aps.requiredEnum("event", APSPayload.Event.self)
        let timestamp = try aps.int("timestamp", expected: "an integer number of Unix seconds")
        var content: ActivityContent?
        if let state = try aps.optional("content-state") {
            guard case .object = state else { throw aps.wrong("content-state", "an object", state) }
            content = ActivityContent(
                state: state, staleDate: try unixSeconds(aps, "stale-date"),
                relevanceScore: try aps.optionalDouble("relevance-score"))
        } else if event != .end {
            throw EventDecodingError(code: .missingField, field: aps.fieldPath("content-state"), expected: "an object")
        }
        var attributesType: String?
        var attributes: JSONValue?
        if event == .start {
            attributesType = try aps.string("attributes-type")
            let value = try aps.required("attributes", expected: "an object")
            guard case .object = value else { throw aps.wrong("attributes", "an object", value) }
            attributes = value
        }
        var inputPushToken = false
        if let value = try aps.optional("input-push-token") {
            switch value {
            case .number(let n): inputPushToken = n.int64Value == 1
            case .bool(let b): inputPushToken = b
            default: throw aps.wrong("input-push-token", "1", value)
            }
        }
        return APSPayload(
            event: event, timestamp: timestamp, content: content,
            dismissalDate: try unixSeconds(aps, "dismissal-date"), alert: try EventCodec.decodeAlert(aps),
            attributesType: attributesType, attributes: attributes, inputPushToken: inputPushToken,
            inputPushChannel: try aps.optionalString("input-push-channel"))
    }

    static func unixSeconds(_ reader: FieldReader, _ key: String) throws(EventDecodingError) -> Instant? {
        guard let value = try reader.optional(key) else { return nil }
        guard case .number(let n) = value, let seconds = n.int64Value else {
            throw reader.wrong(key, "an integer number of Unix seconds", value)
        }
        return Instant(seconds: seconds)
    }

    /// `{"aps": {…}}` for a payload, keys in APNs' documented order.
    public static func json(_ payload: APSPayload) -> JSONValue {
        var aps = JSONObject()
        aps["timestamp"] = .int(payload.timestamp)
        aps["event"] = .string(payload.event.rawValue)
        if let type = payload.attributesType { aps["attributes-type"] = .string(type) }
        if let attributes = payload.attributes { aps["attributes"] = attributes }
        if let content = payload.content {
            aps["content-state"] = content.state
            if let stale = content.staleDate { aps["stale-date"] = .int(stale.seconds) }
            if let score = content.relevanceScore { aps["relevance-score"] = .double(score) }
        }
        if let dismissal = payload.dismissalDate { aps["dismissal-date"] = .int(dismissal.seconds) }
        if let alert = payload.alert { aps["alert"] = EventCodec.alertJSON(alert) }
        if payload.inputPushToken { aps["input-push-token"] = .int(1) }
        if let channel = payload.inputPushChannel { aps["input-push-channel"] = .string(channel) }
        return .object(["aps": .object(aps)])
    }

    /// A `start` (push-to-start) payload for a request. APNs requires an alert for push-to-start.
    public static func start(_ request: RequestData, timestamp: Int64, alert: Alert) -> JSONValue {
        var channel: String?
        if case .channel(let id)? = request.pushType { channel = id }
        var token = false
        if case .token? = request.pushType { token = true }
        return json(
            APSPayload(
                event: .start, timestamp: timestamp, content: request.content, alert: alert,
                attributesType: request.attributesType, attributes: request.attributes, inputPushToken: token,
                inputPushChannel: channel))
    }

    /// An `update` payload.
    public static func update(_ content: ActivityContent, timestamp: Int64, alert: Alert? = nil) -> JSONValue {
        json(APSPayload(event: .update, timestamp: timestamp, content: content, alert: alert))
    }

    /// An `end` payload; the dismissal policy becomes `dismissal-date` (immediate → the end's own timestamp,
    /// which the device treats as "now"; default → omitted, the device keeps it up to 4 h).
    public static func end(_ content: ActivityContent?, timestamp: Int64, dismissalPolicy: DismissalPolicy? = nil)
        -> JSONValue
    {
        let dismissal: Instant? =
            switch dismissalPolicy {
            case .immediate?: Instant(seconds: timestamp)
            case .after(let date)?: date
            case .default?, nil: nil
            }
        return json(APSPayload(event: .end, timestamp: timestamp, content: content, dismissalDate: dismissal))
    }
}
