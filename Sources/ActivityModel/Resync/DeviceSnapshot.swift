/// What `Activity<T>.activities` shows on one installation when the app comes to the foreground (SPEC §5).
public struct DeviceSnapshot: Hashable, Sendable, Codable {
    public struct Entry: Hashable, Sendable, Codable {
        public var activity: String
        public var attributesType: String
        public var activityState: Phase
        /// Timestamp of the content the device shows.
        public var contentTimestamp: Int64?
        /// `ActivityContent.hash(of:)` of the content-state the device shows.
        public var contentHash: String?
        /// The activity's current push token as the device sees it (optional; enables `rebind`).
        public var pushToken: String?

        public init(
            activity: String, attributesType: String, activityState: Phase, contentTimestamp: Int64? = nil,
            contentHash: String? = nil, pushToken: String? = nil
        ) {
            self.activity = activity
            self.attributesType = attributesType
            self.activityState = activityState
            self.contentTimestamp = contentTimestamp
            self.contentHash = contentHash
            self.pushToken = pushToken
        }
    }

    public var installation: String
    public var at: Instant
    public var activities: [Entry]

    public init(installation: String, at: Instant, activities: [Entry]) {
        self.installation = installation
        self.at = at
        self.activities = activities
    }
}

/// SPEC §7 `resync`: one action per activity.
public struct ResyncPlan: Hashable, Sendable, Codable {
    public struct Action: Hashable, Sendable {
        public var activity: String
        public var action: ReconcileAction
        public var reason: String
        /// The `{"aps": …}` payload to send, for `update`, `end` and `endDuplicate`.
        public var payload: JSONValue?

        public init(activity: String, action: ReconcileAction, reason: String, payload: JSONValue? = nil) {
            self.activity = activity
            self.action = action
            self.reason = reason
            self.payload = payload
        }
    }

    public var installation: String
    public var actions: [Action]

    public init(installation: String, actions: [Action]) {
        self.installation = installation
        self.actions = actions
    }
}

extension ResyncPlan.Action: Codable {
    enum CodingKeys: String, CodingKey { case activity, action, reason, payload }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(activity, forKey: .activity)
        try c.encode(action, forKey: .action)
        try c.encode(reason, forKey: .reason)
        try c.encodeIfPresent(payload, forKey: .payload)
    }
}

extension ResyncPlan.Action {
    /// `{"activity","action","reason","payload"?}`
    public var json: JSONValue {
        var o = JSONObject(["activity": .string(activity), "action": .string(action.rawValue), "reason": .string(reason)])
        if let payload { o["payload"] = payload }
        return .object(o)
    }
}

extension ResyncPlan {
    public var json: JSONValue { .object(["installation": .string(installation), "actions": .array(actions.map(\.json))]) }
}
