import Formats

extension EventCodec {
    static func decodeData(_ data: FieldReader, type: EventType) throws(EventDecodingError) -> EventData {
        switch type {
        case .request: return .request(try decodeRequest(data))
        case .token: return .token(try decodeToken(data))
        case .startToken: return .startToken(try decodeToken(data))
        case .update:
            return .update(
                UpdateData(
                    content: try decodeContent(try data.object("content")),
                    timestamp: try data.int("timestamp", expected: "an integer number of Unix seconds"),
                    alert: try decodeAlert(data),
                    priority: try decodePriority(data, "priority")))
        case .end:
            let content: ActivityContent? =
                if data.has("content") { try decodeContent(try data.object("content")) } else { nil }
            return .end(
                EndData(
                    content: content,
                    timestamp: try data.int("timestamp", expected: "an integer number of Unix seconds"),
                    dismissalPolicy: try decodeDismissalPolicy(data)))
        case .dismiss:
            return .dismiss(DismissData(by: try data.requiredEnum("by", DismissedByActor.self)))
        case .push: return .push(try decodePush(data))
        case .observe:
            return .observe(
                ObserveData(
                    activityState: try data.requiredEnum("activityState", Phase.self),
                    contentTimestamp: try data.optionalInt(
                        "contentTimestamp", expected: "an integer number of Unix seconds"),
                    contentHash: try data.optionalString("contentHash")))
        case .subscribe:
            var activity = try data.name("activity")
            // Tolerate the prefixed form; the id is what matters.
            if activity.hasPrefix("activity:"), activity.count > 9 { activity.removeFirst(9) }
            return .subscribe(SubscribeData(activity: activity))
        case .reconcile:
            return .reconcile(
                ReconcileData(
                    run: try data.name("run"),
                    action: try data.requiredEnum("action", ReconcileAction.self),
                    reason: try data.optionalString("reason"),
                    finding: try data.optionalString("finding")))
        }
    }

    static func decodeRequest(_ data: FieldReader) throws(EventDecodingError) -> RequestData {
        let attributesType = try data.string("attributesType")
        let attributes = try data.required("attributes", expected: "an object")
        guard case .object = attributes else { throw data.wrong("attributes", "an object", attributes) }
        let content = try decodeContent(try data.object("content"))
        var pushType: PushType?
        if let value = try data.optional("pushType") {
            let expected = "\"none\", \"token\" or {\"channel\": id}"
            switch value {
            case .string("none"): pushType = PushType.none
            case .string("token"): pushType = .token
            case .string(let other):
                throw EventDecodingError(
                    code: .unknownValue, field: data.fieldPath("pushType"), expected: expected, found: "\"\(other)\"")
            case .object:
                let channel = try FieldReader(value, path: data.fieldPath("pushType"))
                pushType = .channel(try channel.name("channel"))
            default: throw data.wrong("pushType", expected, value)
            }
        }
        return RequestData(
            attributesType: attributesType, attributes: attributes, content: content, pushType: pushType,
            style: try data.optionalEnum("style", ActivityStyle.self),
            scheduledStart: try data.optionalInstant("scheduledStart"),
            origin: try data.optionalEnum("origin", RequestOrigin.self),
            installation: try data.optionalName("installation"))
    }

    static func decodeContent(_ content: FieldReader) throws(EventDecodingError) -> ActivityContent {
        // A stored payload's state stays text until something reads it (most of a fold's contents are never shown).
        let state: LazyJSON
        if let stored = content.storedObject("state") {
            state = stored
        } else {
            let value = try content.required("state", expected: "an object")
            guard case .object = value else { throw content.wrong("state", "an object", value) }
            state = LazyJSON(value)
        }
        return ActivityContent(
            storedState: state, staleDate: try content.optionalInstant("staleDate"),
            relevanceScore: try content.optionalDouble("relevanceScore"))
    }

    static func decodeToken(_ data: FieldReader) throws(EventDecodingError) -> TokenData {
        let token = try data.string("token")
        guard Hex.isDigits(token.utf8) else {
            throw EventDecodingError(
                code: .wrongType, field: data.fieldPath("token"), expected: "a hex string", found: "\"\(token)\"")
        }
        return TokenData(token: token, environment: try data.optionalEnum("environment", APNsEnvironment.self))
    }

    static func decodePriority(_ data: FieldReader, _ key: String) throws(EventDecodingError) -> Int? {
        guard let priority = try data.optionalInt(key, expected: "5 or 10") else { return nil }
        guard priority == 5 || priority == 10 else {
            throw EventDecodingError(
                code: .unknownValue, field: data.fieldPath(key), expected: "5 or 10", found: String(priority))
        }
        return Int(priority)
    }

    static func decodeAlert(_ data: FieldReader) throws(EventDecodingError) -> Alert? {
        guard data.has("alert") else { return nil }
        let alert = try data.object("alert")
        func part(_ key: String) throws(EventDecodingError) -> JSONValue? {
            guard let value = try alert.optional(key) else { return nil }
            switch value {
            case .string, .object: return value
            default: throw alert.wrong(key, "a string or a localized-alert object", value)
            }
        }
        return Alert(title: try part("title"), body: try part("body"), sound: try alert.optionalString("sound"))
    }

    static func decodeDismissalPolicy(_ data: FieldReader) throws(EventDecodingError) -> DismissalPolicy? {
        guard let value = try data.optional("dismissalPolicy") else { return nil }
        let expected = "\"default\", \"immediate\" or {\"after\": time}"
        switch value {
        case .string("default"): return .default
        case .string("immediate"): return .immediate
        case .string(let other):
            throw EventDecodingError(
                code: .unknownValue, field: data.fieldPath("dismissalPolicy"), expected: expected, found: "\"\(other)\"")
        case .object:
            let policy = try FieldReader(value, path: data.fieldPath("dismissalPolicy"))
            return .after(try policy.instant("after"))
        default:
            throw data.wrong("dismissalPolicy", expected, value)
        }
    }

    static func decodePush(_ data: FieldReader) throws(EventDecodingError) -> PushData {
        let refersTo = try data.name("refersTo")
        let status = try data.int("status", expected: "an HTTP status code")
        guard PushData.statuses.contains(status) else {
            throw EventDecodingError(
                code: .wrongType, field: data.fieldPath("status"), expected: "an HTTP status code",
                found: String(status))
        }
        var apnsTimestamp: Instant?
        if let value = try data.optional("apnsTimestamp") {
            let expected = "Unix milliseconds or an RFC 3339 time"
            switch value {
            case .number(let n):
                guard let instant = Instant(unixMilliseconds: n) else { throw data.wrong("apnsTimestamp", expected, value) }
                apnsTimestamp = instant
            case .string(let s):
                guard let instant = Instant(rfc3339: s) else {
                    throw EventDecodingError(
                        code: .wrongType, field: data.fieldPath("apnsTimestamp"), expected: expected, found: "\"\(s)\"")
                }
                apnsTimestamp = instant
            default: throw data.wrong("apnsTimestamp", expected, value)
            }
        }
        return PushData(
            refersTo: refersTo, status: Int(status), reason: try data.optionalString("reason"),
            apnsId: try data.optionalString("apnsId"), token: try data.optionalName("token"),
            channel: try data.optionalName("channel"), priority: try decodePriority(data, "priority"),
            apnsTimestamp: apnsTimestamp)
    }
}
