import Foundation

extension ActivityState {
    /// The SPEC §7 `state` object (fixed names first, nulls written), followed by the extra fields.
    public var json: JSONValue {
        var o = JSONObject()
        o["activity"] = .string(activity)
        o["asOf"] = .string(asOf.rfc3339)
        o["phase"] = .string(phase.rawValue)
        o["endedBy"] = endedBy.map { .string($0.rawValue) } ?? .null
        o["dismissedBy"] = dismissedBy.map { .string($0.rawValue) } ?? .null
        o["attributesType"] = .string(attributesType)
        o["attributes"] = attributes
        o["displayed"] = displayed?.json ?? .null
        o["intended"] = intended?.json ?? .null
        o["token"] = token.map { .string($0) } ?? .null
        o["events"] = .int(Int64(events))
        o["lastPosition"] = .int(lastPosition)
        o["requestedAt"] = .string(requestedAt.rfc3339)
        o["startsAt"] = .string(startsAt.rfc3339)
        o["endedAt"] = endedAt.map { .string($0.rfc3339) } ?? .null
        o["removedAt"] = removedAt.map { .string($0.rfc3339) } ?? .null
        o["removalDeadline"] = removalDeadline.map { .string($0.rfc3339) } ?? .null
        o["staleDate"] = staleDate.map { .string($0.rfc3339) } ?? .null
        switch pushType {
        case .none?: o["pushType"] = "none"
        case .token?: o["pushType"] = "token"
        case .channel(let id)?: o["pushType"] = .object(["channel": .string(id)])
        case nil: o["pushType"] = .null
        }
        o["style"] = style.map { .string($0.rawValue) } ?? .null
        o["origin"] = origin.map { .string($0.rawValue) } ?? .null
        o["installation"] = installation.map { .string($0) } ?? .null
        o["channels"] = .array(channels.map { .string($0) })
        o["tokenDead"] = .bool(tokenIsDead)
        o["tokenHistory"] = .array(
            tokenHistory.map { record in
                .object([
                    "token": .string(record.token),
                    "at": .string(record.at.rfc3339),
                    "environment": record.environment.map { .string($0.rawValue) } ?? .null,
                    "deadFrom": record.deadFrom.map { .string($0.rfc3339) } ?? .null,
                    "event": record.event.map { .string($0) } ?? .null,
                ])
            })
        o["counters"] = .object([
            "updates": .int(Int64(counters.updates)),
            "ends": .int(Int64(counters.ends)),
            "channelUpdates": .int(Int64(counters.channelUpdates)),
            "pushes": .int(Int64(counters.pushes)),
            "failedPushes": .int(Int64(counters.failedPushes)),
            "observations": .int(Int64(counters.observations)),
            "tokens": .int(Int64(counters.tokens)),
            "dismissals": .int(Int64(counters.dismissals)),
            "reconciles": .int(Int64(counters.reconciles)),
            "pushesToSupersededToken": .int(Int64(counters.pushesToSupersededToken)),
        ])
        o["firstEvent"] = firstEvent.map { .string($0) } ?? .null
        o["lastEvent"] = lastEvent.map { .string($0) } ?? .null
        return .object(o)
    }

    /// Reads the object produced by `json` (e.g. from a projection table).
    public init?(json: JSONValue) {
        func instant(_ key: String) -> Instant? { json[key]?.stringValue.flatMap(Instant.init(rfc3339:)) }
        func int(_ value: JSONValue?) -> Int { Int(value?.numberValue?.int64Value ?? 0) }
        guard let activity = json["activity"]?.stringValue, let asOf = instant("asOf"),
            let phase = json["phase"]?.stringValue.flatMap(Phase.init(rawValue:)),
            let attributesType = json["attributesType"]?.stringValue,
            let requestedAt = instant("requestedAt"), let startsAt = instant("startsAt")
        else { return nil }
        self.activity = activity
        self.asOf = asOf
        self.phase = phase
        self.endedBy = json["endedBy"]?.stringValue.flatMap(EndedBy.init(rawValue:))
        self.dismissedBy = json["dismissedBy"]?.stringValue.flatMap(DismissedBy.init(rawValue:))
        self.attributesType = attributesType
        self.attributes = json["attributes"] ?? .object(JSONObject())
        self.displayed = json["displayed"].flatMap(ContentSnapshot.init(json:))
        self.intended = json["intended"].flatMap(ContentSnapshot.init(json:))
        self.token = json["token"]?.stringValue
        self.events = int(json["events"])
        self.lastPosition = json["lastPosition"]?.numberValue?.int64Value ?? 0
        self.requestedAt = requestedAt
        self.startsAt = startsAt
        self.endedAt = instant("endedAt")
        self.removedAt = instant("removedAt")
        self.removalDeadline = instant("removalDeadline")
        self.staleDate = instant("staleDate")
        switch json["pushType"] {
        case .string("none")?: self.pushType = PushType.none
        case .string("token")?: self.pushType = .token
        case .object(let o)?: self.pushType = o["channel"]?.stringValue.map { .channel($0) }
        default: self.pushType = nil
        }
        self.style = json["style"]?.stringValue.flatMap(ActivityStyle.init(rawValue:))
        self.origin = json["origin"]?.stringValue.flatMap(RequestOrigin.init(rawValue:))
        self.installation = json["installation"]?.stringValue
        self.channels = json["channels"]?.arrayValue?.compactMap(\.stringValue) ?? []
        self.tokenHistory = (json["tokenHistory"]?.arrayValue ?? []).compactMap { record in
            guard let token = record["token"]?.stringValue,
                let at = record["at"]?.stringValue.flatMap(Instant.init(rfc3339:))
            else { return nil }
            return TokenRecord(
                token: token, at: at,
                environment: record["environment"]?.stringValue.flatMap(APNsEnvironment.init(rawValue:)),
                deadFrom: record["deadFrom"]?.stringValue.flatMap(Instant.init(rfc3339:)),
                event: record["event"]?.stringValue)
        }
        var counters = Counters()
        let c = json["counters"]
        counters.updates = int(c?["updates"])
        counters.ends = int(c?["ends"])
        counters.channelUpdates = int(c?["channelUpdates"])
        counters.pushes = int(c?["pushes"])
        counters.failedPushes = int(c?["failedPushes"])
        counters.observations = int(c?["observations"])
        counters.tokens = int(c?["tokens"])
        counters.dismissals = int(c?["dismissals"])
        counters.reconciles = int(c?["reconciles"])
        counters.pushesToSupersededToken = int(c?["pushesToSupersededToken"])
        self.counters = counters
        self.firstEvent = json["firstEvent"]?.stringValue
        self.lastEvent = json["lastEvent"]?.stringValue
    }
}

extension ActivityState: Codable {
    public init(from decoder: any Decoder) throws {
        let json = try JSONValue(from: decoder)
        guard let state = ActivityState(json: json) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a state"))
        }
        self = state
    }

    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}
