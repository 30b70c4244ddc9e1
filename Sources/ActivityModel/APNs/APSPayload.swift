/// The `aps` dictionary of an APNs `liveactivity` push.
public struct APSPayload: Hashable, Sendable {
    public enum Event: String, Hashable, Sendable, CaseIterable {
        case start, update, end
    }

    public var event: Event
    /// Unix seconds.
    public var timestamp: Int64
    /// `content-state`, `stale-date` and `relevance-score`; absent only on an `end` without content.
    public var content: ActivityContent?
    /// `end` only: when the ended activity leaves the screen (capped at 4 h after the end by the device).
    public var dismissalDate: Instant?
    public var alert: Alert?
    /// `start` only.
    public var attributesType: String?
    public var attributes: JSONValue?
    /// `input-push-token: 1` (iOS 18 start): ask the new activity for an update token.
    public var inputPushToken: Bool
    /// `input-push-channel` (iOS 18 start): subscribe the new activity to this channel.
    public var inputPushChannel: String?

    public init(
        event: Event, timestamp: Int64, content: ActivityContent?, dismissalDate: Instant? = nil,
        alert: Alert? = nil, attributesType: String? = nil, attributes: JSONValue? = nil,
        inputPushToken: Bool = false, inputPushChannel: String? = nil
    ) {
        self.event = event
        self.timestamp = timestamp
        self.content = content
        self.dismissalDate = dismissalDate
        self.alert = alert
        self.attributesType = attributesType
        self.attributes = attributes
        self.inputPushToken = inputPushToken
        self.inputPushChannel = inputPushChannel
    }
}

/// A raw APNs `liveactivity` request as a provider sent it.
public struct APNsRequest: Hashable, Sendable {
    /// `/3/device/<token>` or `/4/broadcasts/apps/<bundle>`; may be nil when headers say enough.
    public var path: String?
    /// Header names are matched case-insensitively.
    public var headers: [String: String]
    /// The JSON body, `{"aps": {…}}`.
    public var body: JSONValue

    public init(path: String?, headers: [String: String], body: JSONValue) {
        self.path = path
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        self.body = body
    }

    /// The device token of a token push (`/3/device/<token>`).
    public var deviceToken: String? {
        guard let path, path.hasPrefix("/3/device/") else { return nil }
        let token = String(path.dropFirst("/3/device/".count))
        return token.isEmpty ? nil : token
    }

    /// The channel of a broadcast push (`apns-channel-id`).
    public var channelID: String? { headers["apns-channel-id"] }
}

/// APNs' answer to a request.
public struct APNsResponse: Hashable, Sendable {
    public var status: Int
    public var headers: [String: String]
    /// Error body: `{"reason": "...", "timestamp": <ms, 410 only>}`.
    public var body: JSONValue?

    public init(status: Int, headers: [String: String] = [:], body: JSONValue? = nil) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        self.body = body
    }
}
