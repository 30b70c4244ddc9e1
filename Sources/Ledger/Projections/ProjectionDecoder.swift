import ActivityModel
import Formats
import LedgerStore

/// Stored payload → `ProjectionEvent` for a rebuild, without building JSON trees: content states stay bytes of
/// the payload (sized while skipped, parsed only if an activity row keeps them), and fields no projection column
/// reads are validated but not kept.
///
/// It accepts only what `EventCodec.decodePayload` accepts and gives what `ProjectionEvent(_:)` makes of that
/// decoder's event; anything it does not handle (an escaped key, an invalid payload) goes to the full decoder,
/// which also words the error. Field rules mirror `EventCodec+Data.swift` and `FieldReader`.
enum ProjectionDecoder {
    /// The projection's view of a stored event; throws `LedgerError` "position N: …" when it does not decode.
    /// Its names are qualified by the event's app (`ProjectionEvent.qualified`), as projection rows keep them.
    static func decode(_ recorded: RecordedEvent) throws -> ProjectionEvent {
        let event = try fast(recorded) ?? ProjectionEvent(try ActivityProjector.decode(recorded))
        return (consume event).qualified(app: Namespaced.app(recorded.stream))
    }

    /// `decode` of an event lent by a scan (`EventStore.forEachEventView`): only what the projection keeps is
    /// copied out of it; the full decoder, for what the fast path leaves, gets the event built. `streams` resolves
    /// the view's stream once for all the events of a block (they share one stream string).
    static func decode(_ view: EventView, streams: inout StreamMemo) throws -> ProjectionEvent {
        let stream = streams.resolve(view.stream)
        let event =
            try fast(view, stream: stream.name) ?? ProjectionEvent(try ActivityProjector.decode(view.recorded()))
        return (consume event).qualified(app: stream.app)
    }

    /// `decode(_:streams:)` with a memo of its own, as a scan's per-segment transform (one thread). The memo lies
    /// behind a pointer: a `var` captured by an escaping closure (or a class's stored `var`) is checked for exclusive
    /// access at run time on every call (~1 % of a sealed rebuild).
    final class ViewDecoder {
        private let streams = UnsafeMutablePointer<StreamMemo>.allocate(capacity: 1)

        init() { streams.initialize(to: StreamMemo()) }

        deinit {
            streams.deinitialize(count: 1)
            streams.deallocate()
        }

        func decode(_ view: EventView) -> Result<ProjectionEvent, any Error> {
            Result { try ProjectionDecoder.decode(view, streams: &streams.pointee) }
        }
    }

    /// A stored stream name split into its app and its `StreamName`, kept while the next events have the same
    /// stream: a sealed block lends all its events with one string, so most events compare it and split nothing
    /// (splitting it per event was ~5 % of a sealed rebuild). One per reader: a scan's transform, a query's decoder.
    struct StreamMemo {
        private var stored: String?
        private var resolved: (name: StreamName?, app: String) = (nil, "")

        init() {}

        mutating func resolve(_ stream: String) -> (name: StreamName?, app: String) {
            if stream != stored {
                let (app, name) = Namespaced.split(stream)
                resolved = (StreamName(name), app)
                stored = stream
            }
            return resolved
        }
    }

    /// The fast path alone: nil when it cannot decide. Its names are the app's own (not qualified).
    static func fast(_ recorded: RecordedEvent) -> ProjectionEvent? {
        guard let stream = StreamName(Namespaced.name(recorded.stream)) else { return nil }
        return recorded.payload.withUnsafeBufferPointer { payload in
            fast(type: recorded.type, stream: stream, at: recorded.at, payload: payload, owner: recorded.payload)
        }
    }

    static func fast(_ view: EventView) -> ProjectionEvent? {
        fast(view, stream: StreamName(Namespaced.name(view.stream)))
    }

    /// `fast(_:)` of a view whose stream the caller resolved (`StreamMemo`).
    private static func fast(_ view: EventView, stream: StreamName?) -> ProjectionEvent? {
        guard let stream, let type = eventType(view.type.assumingMemoryBound(to: UInt8.self)) else { return nil }
        return fast(
            type: type, stream: stream, at: view.at, payload: view.payload.assumingMemoryBound(to: UInt8.self),
            owner: view.payloadOwner)
    }

    /// `payload` lies in `owner` when the caller has it as an array (a content state then keeps the array instead
    /// of a copy of its bytes).
    private static func fast(
        type: String, stream: StreamName, at: Int64, payload: UnsafeBufferPointer<UInt8>, owner: [UInt8]?
    ) -> ProjectionEvent? {
        guard let type = eventType(type) else { return nil }
        return fast(type: type, stream: stream, at: at, payload: payload, owner: owner)
    }

    private static func fast(
        type: EventType, stream: StreamName, at: Int64, payload: UnsafeBufferPointer<UInt8>, owner: [UInt8]?
    ) -> ProjectionEvent? {
        var reader = PayloadReader(payload, owner: owner)
        return try? reader.event(type: type, stream: stream, at: at)
    }

    /// `eventType(_:)` of a name's UTF-8 bytes where they lie (a lent block's): no string is made for the six
    /// frequent types (making one per event and switching over it was ~2 % of a sealed rebuild).
    static func eventType(_ name: UnsafeBufferPointer<UInt8>) -> EventType? {
        let types: [StaticString] = ["push", "update", "observe", "token", "request", "end"]
        let frequent: [EventType] = [.push, .update, .observe, .token, .request, .end]
        if let index = Seen.index(of: name, in: types) { return frequent[index] }
        return EventType(rawValue: String(decoding: name, as: UTF8.self))
    }

    /// `EventType(rawValue:)`, most frequent first (the generic lookup showed in rebuild profiles): the byte
    /// matcher above, so the frequent types are listed once.
    static func eventType(_ name: String) -> EventType? {
        var name = name
        return name.withUTF8 { eventType($0) }
    }
}

/// The per-type field rules of the fast path (the `data` objects of SPEC §2, storage form).
struct PayloadReader {
    var scanner: PayloadScanner
    /// The array the scanned bytes lie in, if any: a content state keeps it instead of a copy of its bytes.
    let payloadOwner: [UInt8]?

    init(_ payload: UnsafeBufferPointer<UInt8>, owner: [UInt8]?) {
        scanner = PayloadScanner(payload)
        payloadOwner = owner
    }

    mutating func event(type: EventType, stream: StreamName, at: Int64) throws(UnusualPayload) -> ProjectionEvent {
        var source: Source?
        var body: ProjectionEvent.Body?
        var seen = Seen()
        if try scanner.beginObject() {
            repeat {
                switch try seen.field(scanner.key(), ["source", "data"]) {
                case 0: source = try optionalSource()
                case 1: body = try data(type)
                default: try skip(depth: 2)
                }
            } while try scanner.nextMember()
        }
        scanner.skipWhitespace()
        guard scanner.atEnd, let body else { throw UnusualPayload() }
        return ProjectionEvent(stream: stream, at: at, source: source ?? .server, body: body)
    }

    private mutating func data(_ type: EventType) throws(UnusualPayload) -> ProjectionEvent.Body {
        switch type {
        case .request: return .request(try request())
        case .token: return .token(try token())
        case .startToken: return .startToken(try token())
        case .update:
            let (content, timestamp) = try update()
            return .update(content, timestamp: timestamp)
        case .end: return .end(try end())
        case .dismiss:
            var by: DismissedByActor?
            try members(["by"]) { reader, _ throws(UnusualPayload) in
                by = try reader.optionalEnum(DismissedByActor.self)
            }
            guard let by else { throw UnusualPayload() }
            return .dismiss(by)
        case .push: return .push(try push())
        case .observe:
            var state: Phase?
            try members(["activityState", "contentTimestamp", "contentHash"]) { reader, field throws(UnusualPayload) in
                switch field {
                case 0: state = try reader.optionalEnum(Phase.self)
                case 1: _ = try reader.optionalInt()
                default: try reader.validateString()
                }
            }
            guard state != nil else { throw UnusualPayload() }
            return .observe
        case .subscribe:
            var activity: String?
            try members(["activity"]) { reader, _ throws(UnusualPayload) in activity = try reader.optionalName() }
            guard var activity, !activity.isEmpty else { throw UnusualPayload() }
            // As `EventCodec.decodeData`: the prefixed form is tolerated.
            if activity.hasPrefix("activity:"), activity.count > 9 { activity.removeFirst(9) }
            return .subscribe(activity: activity)
        case .reconcile:
            var run: Range<Int>?
            var action: ReconcileAction?
            try members(["run", "action", "reason", "finding"]) { reader, field throws(UnusualPayload) in
                switch field {
                case 0: run = try reader.validateName()
                case 1: action = try reader.optionalEnum(ReconcileAction.self)
                default: try reader.validateString()
                }
            }
            guard let run, !run.isEmpty, action != nil else { throw UnusualPayload() }
            return .reconcile
        }
    }

    private mutating func request() throws(UnusualPayload) -> ProjectionEvent.Request {
        var attributesType: String?
        var attributes = false
        var content: ProjectionEvent.Content?
        var pushType: PushType?
        var scheduledStart: Int64?
        var origin: RequestOrigin?
        var installation: String?
        let fields: [StaticString] = [
            "attributesType", "attributes", "content", "pushType", "style", "scheduledStart", "origin", "installation",
        ]
        try members(fields) { reader, field throws(UnusualPayload) in
            switch field {
            case 0: attributesType = try reader.optionalString()
            case 1:
                guard reader.scanner.current == UInt8(ascii: "{") else { throw UnusualPayload() }
                try reader.skip(depth: 3)
                attributes = true
            case 2: content = try reader.content()
            case 3: pushType = try reader.pushType()
            case 4: _ = try reader.optionalEnum(ActivityStyle.self)
            case 5: scheduledStart = try reader.optionalInstant()
            case 6: origin = try reader.optionalEnum(RequestOrigin.self)
            default: installation = try reader.optionalName()
            }
        }
        guard let attributesType, !attributesType.isEmpty, attributes, let content else { throw UnusualPayload() }
        return ProjectionEvent.Request(
            attributesType: attributesType, installation: installation, origin: origin, pushType: pushType,
            scheduledStart: scheduledStart, content: content)
    }

    private mutating func token() throws(UnusualPayload) -> String {
        var token: String?
        try members(["token", "environment"]) { reader, field throws(UnusualPayload) in
            if field == 0 {
                token = try reader.optionalString()
            } else {
                _ = try reader.optionalEnum(APNsEnvironment.self)
            }
        }
        guard let token, !token.isEmpty, Hex.isDigits(token.utf8) else { throw UnusualPayload() }
        return token
    }

    private mutating func update() throws(UnusualPayload) -> (ProjectionEvent.Content, Int64) {
        var content: ProjectionEvent.Content?
        var timestamp: Int64?
        try members(["content", "timestamp", "alert", "priority"]) { reader, field throws(UnusualPayload) in
            switch field {
            case 0: content = try reader.content()
            case 1: timestamp = try reader.optionalInt()
            case 2: try reader.alert()
            default: try reader.priority()
            }
        }
        guard let content, let timestamp else { throw UnusualPayload() }
        return (content, timestamp)
    }

    private mutating func end() throws(UnusualPayload) -> ProjectionEvent.End {
        var content: ProjectionEvent.Content?
        var timestamp: Int64?
        var policy: DismissalPolicy?
        try members(["content", "timestamp", "dismissalPolicy"]) { reader, field throws(UnusualPayload) in
            switch field {
            case 0: if try !reader.scanner.null() { content = try reader.content() }
            case 1: timestamp = try reader.optionalInt()
            default: policy = try reader.dismissalPolicy()
            }
        }
        guard let timestamp else { throw UnusualPayload() }
        return ProjectionEvent.End(content: content, timestamp: timestamp, dismissalPolicy: policy)
    }

    private mutating func push() throws(UnusualPayload) -> ProjectionEvent.Push {
        var refersTo: Range<Int>?
        var status: Int64?
        var token: Range<Int>?
        var apnsTimestamp: Int64?
        let fields: [StaticString] = [
            "refersTo", "status", "apnsTimestamp", "token", "reason", "apnsId", "channel", "priority",
        ]
        try members(fields) { reader, field throws(UnusualPayload) in
            switch field {
            case 0: refersTo = try reader.validateName()
            case 1: status = try reader.optionalInt()
            case 2: apnsTimestamp = try reader.apnsTimestamp()
            case 3: token = try reader.validateName()
            case 6: try reader.validateName()
            case 4, 5: try reader.validateString()
            default: try reader.priority()
            }
        }
        guard let refersTo, !refersTo.isEmpty, let status, PushData.statuses.contains(status) else { throw UnusualPayload() }
        // Only a 410's token is used (`recordDeath`): the others are validated, not made into strings.
        let tokenText = try status == 410 ? token.map(scanner.text) : nil
        return ProjectionEvent.Push(status: Int(status), token: tokenText, apnsTimestamp: apnsTimestamp)
    }
}
