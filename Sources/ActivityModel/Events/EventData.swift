/// The `data` of an event, one case per `EventType` (field names as SPEC §2).
public indirect enum EventData: Hashable, Sendable {
    case request(RequestData)
    case token(TokenData)
    case startToken(TokenData)
    case update(UpdateData)
    case end(EndData)
    case dismiss(DismissData)
    case push(PushData)
    case observe(ObserveData)
    case subscribe(SubscribeData)
    case reconcile(ReconcileData)

    public var type: EventType {
        switch self {
        case .request: .request
        case .token: .token
        case .startToken: .startToken
        case .update: .update
        case .end: .end
        case .dismiss: .dismiss
        case .push: .push
        case .observe: .observe
        case .subscribe: .subscribe
        case .reconcile: .reconcile
        }
    }
}

/// `request`: an activity was requested (started) with its attributes and initial content.
public struct RequestData: Hashable, Sendable {
    public var attributesType: String
    public var attributes: JSONValue
    public var content: ActivityContent
    public var pushType: PushType?
    public var style: ActivityStyle?
    /// iOS 26 scheduled start: the activity is `pending` until then.
    public var scheduledStart: Instant?
    public var origin: RequestOrigin?
    public var installation: String?

    public init(
        attributesType: String, attributes: JSONValue, content: ActivityContent, pushType: PushType? = nil,
        style: ActivityStyle? = nil, scheduledStart: Instant? = nil, origin: RequestOrigin? = nil,
        installation: String? = nil
    ) {
        self.attributesType = attributesType
        self.attributes = attributes
        self.content = content
        self.pushType = pushType
        self.style = style
        self.scheduledStart = scheduledStart
        self.origin = origin
        self.installation = installation
    }
}

/// `token` (per-activity update token) and `startToken` (per-installation push-to-start token).
public struct TokenData: Hashable, Sendable {
    /// Hex, as ActivityKit hands it out.
    public var token: String
    public var environment: APNsEnvironment?

    public init(token: String, environment: APNsEnvironment? = nil) {
        self.token = token
        self.environment = environment
    }
}

public struct Alert: Hashable, Sendable {
    public var title: JSONValue?
    public var body: JSONValue?
    public var sound: String?

    public init(title: JSONValue? = nil, body: JSONValue? = nil, sound: String? = nil) {
        self.title = title
        self.body = body
        self.sound = sound
    }
}

/// `update`: new content with its APNs `timestamp` (Unix seconds).
public struct UpdateData: Hashable, Sendable {
    public var content: ActivityContent
    public var timestamp: Int64
    public var alert: Alert?
    /// 5 or 10.
    public var priority: Int?

    public init(content: ActivityContent, timestamp: Int64, alert: Alert? = nil, priority: Int? = nil) {
        self.content = content
        self.timestamp = timestamp
        self.alert = alert
        self.priority = priority
    }
}

/// `end`: the activity ends, optionally with final content, and leaves the screen by its dismissal policy.
public struct EndData: Hashable, Sendable {
    public var content: ActivityContent?
    public var timestamp: Int64
    public var dismissalPolicy: DismissalPolicy?

    public init(content: ActivityContent? = nil, timestamp: Int64, dismissalPolicy: DismissalPolicy? = nil) {
        self.content = content
        self.timestamp = timestamp
        self.dismissalPolicy = dismissalPolicy
    }
}

/// `dismiss`: the activity was removed from the screen.
public struct DismissData: Hashable, Sendable {
    public var by: DismissedByActor
    public init(by: DismissedByActor) { self.by = by }
}

/// `push`: one APNs attempt carrying the request/update/end `refersTo`, and APNs' answer.
public struct PushData: Hashable, Sendable {
    /// The HTTP statuses a push may record (the decoder's rule, and every door's).
    public static let statuses: ClosedRange<Int64> = 100...599

    public var refersTo: String
    public var status: Int
    public var reason: String?
    public var apnsId: String?
    public var token: String?
    public var channel: String?
    public var priority: Int?
    /// From a 410 body: the token is invalid from this time on.
    public var apnsTimestamp: Instant?

    public init(
        refersTo: String, status: Int, reason: String? = nil, apnsId: String? = nil, token: String? = nil,
        channel: String? = nil, priority: Int? = nil, apnsTimestamp: Instant? = nil
    ) {
        self.refersTo = refersTo
        self.status = status
        self.reason = reason
        self.apnsId = apnsId
        self.token = token
        self.channel = channel
        self.priority = priority
        self.apnsTimestamp = apnsTimestamp
    }

    public var isSuccess: Bool { (200..<300).contains(status) }
}

/// `observe`: what the device reported (activityStateUpdates / contentUpdates).
public struct ObserveData: Hashable, Sendable {
    public var activityState: Phase
    /// The `timestamp` of the content the device shows.
    public var contentTimestamp: Int64?
    /// `ActivityContent.hash(of:)` of the content-state the device shows.
    public var contentHash: String?

    public init(activityState: Phase, contentTimestamp: Int64? = nil, contentHash: String? = nil) {
        self.activityState = activityState
        self.contentTimestamp = contentTimestamp
        self.contentHash = contentHash
    }
}

/// `subscribe` (channel stream): `activity` listens to the channel from this event's `at` on.
public struct SubscribeData: Hashable, Sendable {
    public var activity: String
    public init(activity: String) { self.activity = activity }
}

/// `reconcile`: what a reconciliation run decided for the activity (`source: ledger`).
public struct ReconcileData: Hashable, Sendable {
    public var run: String
    public var action: ReconcileAction
    public var reason: String?
    public var finding: String?

    public init(run: String, action: ReconcileAction, reason: String? = nil, finding: String? = nil) {
        self.run = run
        self.action = action
        self.reason = reason
        self.finding = finding
    }
}
