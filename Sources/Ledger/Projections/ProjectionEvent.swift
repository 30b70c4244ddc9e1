import ActivityModel
import Foundation
import LedgerStore

/// The part of an event the projection reads (`ProjectionBatch`): what `LedgerEvent` carries minus attributes,
/// alerts and the other fields no projection column depends on.
///
/// A rebuild makes these straight from stored payloads (`ProjectionDecoder`) without building JSON trees; an
/// append converts the events it already decoded (`init(_:)`). Both give the same rows.
struct ProjectionEvent: Equatable, Sendable {
    var stream: StreamName
    /// Unix milliseconds.
    var at: Int64
    var source: Source
    var body: Body

    enum Body: Equatable, Sendable {
        // The two large cases are boxed (one allocation each, ~2 % of events): every value a rebuild moves is then
        // ~60 bytes instead of ~155.
        indirect case request(Request)
        case token(String)
        case startToken(String)
        case update(Content, timestamp: Int64)
        indirect case end(End)
        case dismiss(DismissedByActor)
        case push(Push)
        case observe
        case subscribe(activity: String)
        case reconcile
    }

    struct Request: Equatable, Sendable {
        var attributesType: String
        var installation: String?
        var origin: RequestOrigin?
        var pushType: PushType?
        /// Unix milliseconds.
        var scheduledStart: Int64?
        var content: Content
    }

    struct End: Equatable, Sendable {
        var content: Content?
        /// Unix seconds.
        var timestamp: Int64
        var dismissalPolicy: DismissalPolicy?
    }

    struct Push: Equatable, Sendable {
        var status: Int
        /// A 410's token (the token it kills); nil for any other status, whose token no projection reads.
        var token: String?
        /// Unix milliseconds.
        var apnsTimestamp: Int64?

        var isSuccess: Bool { (200..<300).contains(status) }
    }

    /// An `ActivityContent` as the projection sees it.
    struct Content: Equatable, Sendable {
        var state: ContentState
        /// Unix milliseconds.
        var staleDate: Int64?
        /// Over `ActivityContent.maximumStateSize` compact bytes: recorded, never displayed.
        var isTooLarge: Bool
    }

    init(stream: StreamName, at: Int64, source: Source, body: Body) {
        self.stream = stream
        self.at = at
        self.source = source
        self.body = body
    }

    /// The projection's view of an event the caller already decoded.
    init(_ event: LedgerEvent) {
        stream = event.stream
        at = event.at.milliseconds
        source = event.source
        switch event.data {
        case .request(let request):
            body = .request(
                Request(
                    attributesType: request.attributesType, installation: request.installation,
                    origin: request.origin, pushType: request.pushType,
                    scheduledStart: request.scheduledStart?.milliseconds, content: Content(request.content)))
        case .token(let data): body = .token(data.token)
        case .startToken(let data): body = .startToken(data.token)
        case .update(let update): body = .update(Content(update.content), timestamp: update.timestamp)
        case .end(let end):
            body = .end(
                End(
                    content: end.content.map(Content.init), timestamp: end.timestamp,
                    dismissalPolicy: end.dismissalPolicy))
        case .dismiss(let dismiss): body = .dismiss(dismiss.by)
        case .push(let push):
            body = .push(
                Push(
                    status: push.status, token: push.status == 410 ? push.token : nil,
                    apnsTimestamp: push.apnsTimestamp?.milliseconds))
        case .observe: body = .observe
        case .subscribe(let subscribe): body = .subscribe(activity: subscribe.activity)
        case .reconcile: body = .reconcile
        }
    }
}

extension ProjectionEvent {
    /// The event with `transform` applied to each content it carries (request, update, end).
    func mapContents(_ transform: (Content) -> Content) -> ProjectionEvent {
        var copy = self
        switch body {
        case .request(var request):
            request.content = transform(request.content)
            copy.body = .request(request)
        case .update(let content, let timestamp):
            copy.body = .update(transform(content), timestamp: timestamp)
        case .end(var end):
            end.content = end.content.map(transform)
            copy.body = .end(end)
        default:
            break
        }
        return copy
    }

    /// The event with each content state replaced by its hash (`ContentState.hashed`).
    func hashingStates() -> ProjectionEvent {
        mapContents { content in
            var hashed = content
            hashed.state = .hashed(content.state.hash)
            return hashed
        }
    }
}

extension ProjectionEvent.Content {
    /// A state held as text (an event read in place) stays text: only the state a row ends with is parsed.
    init(_ content: ActivityContent) {
        let state: ContentState =
            if let text = content.storedState.heldText { .stored(payload: text.bytes, range: text.range) } else {
                .value(content.state)
            }
        self.init(state: state, staleDate: content.staleDate?.milliseconds, isTooLarge: content.isTooLarge)
    }
}

/// A content state, parsed or still as its bytes in a stored payload; only the state an activity row ends up
/// with is hashed (`intended_hash`), so a rebuild parses one state per row instead of every one.
enum ContentState: Equatable, Sendable {
    case value(JSONValue)
    /// `payload[range]` is the state's JSON, already validated: the stored payload itself when the event was built
    /// (a row's), a copy of the state alone when it was lent from a sealed block (`EventView.payloadOwner`).
    case stored(payload: [UInt8], range: Range<Int>)
    /// Only the state's hash, computed where the event was decoded (an append's caller, an import's decoding
    /// thread), so the writer neither canonicalizes nor hashes states.
    case hashed(Data)

    /// Bytes of the payload this state keeps alive.
    var storedBytes: Int {
        if case .stored(let payload, _) = self { return payload.count }
        return 0
    }

    /// `NightlyFacts.hash` of the state.
    var hash: Data {
        switch self {
        case .value(let value):
            return NightlyFacts.hash(value)
        case .hashed(let hash):
            return hash
        case .stored(let payload, let range):
            // Validated by the decoder that made it, so this parse cannot fail; an empty hash would show if it did.
            guard let value = try? JSONParser.parse(payload[range]) else { return Data() }
            return NightlyFacts.hash(value)
        }
    }
}

extension ProjectionEvent {
    /// The event with every name it carries (its stream's id, tokens, channels, installations, a subscribed
    /// activity) qualified by `app` (`Namespaced`): projection rows hold stored names, so two apps' activities,
    /// tokens and channels never meet in a table. Queries qualify their inputs and strip their outputs.
    /// Consuming: the event is moved through, not copied (a copy and a destroy per event was ~2 % of a sealed
    /// rebuild).
    consuming func qualified(app: String) -> ProjectionEvent {
        guard !app.isEmpty else { return self }
        func q(_ name: String) -> String { Namespaced.qualify(name, app: app) }
        var copy = self
        copy.stream = StreamName(kind: copy.stream.kind, id: q(copy.stream.id))
        switch copy.body {
        case .request(var request):
            request.installation = request.installation.map(q)
            if case .channel(let channel)? = request.pushType { request.pushType = .channel(q(channel)) }
            copy.body = .request(request)
        case .token(let token): copy.body = .token(q(token))
        case .startToken(let token): copy.body = .startToken(q(token))
        case .push(var push):
            push.token = push.token.map(q)
            copy.body = .push(push)
        case .subscribe(let activity): copy.body = .subscribe(activity: q(activity))
        default: break
        }
        return copy
    }
}
