extension EventCodec {
    /// Interchange JSON of an event: `{"id","stream","type","at","source","data"}`, compact (id omitted when nil).
    public static func encode(_ event: LedgerEvent) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(json(event))
        return writer.bytes
    }

    /// The interchange JSON object of an event.
    public static func json(_ event: LedgerEvent) -> JSONValue {
        var object = JSONObject()
        if let id = event.id { object["id"] = .string(id) }
        object["stream"] = .string(event.stream.description)
        object["type"] = .string(event.type.rawValue)
        object["at"] = .string(event.at.rfc3339)
        object["source"] = .string(event.source.rawValue)
        object["data"] = dataJSON(event.data)
        return .object(object)
    }

    /// Storage form: compact `{"source":…,"data":…}`; id, stream, type and at live in the row's columns.
    /// Written straight to bytes (every append encodes one): the same members `dataJSON` builds as a tree.
    public static func encodePayload(_ event: LedgerEvent) -> [UInt8] {
        // Room for the members besides a content state and attributes (most payloads are 64–320 bytes), and for
        // those: an import's payloads are then written without growing their array.
        var capacity = 256
        switch event.data {
        case .request(let request): capacity += request.content.encodedStateSize + request.attributes.compactSize
        case .update(let update): capacity += update.content.encodedStateSize
        case .end(let end): capacity += end.content?.encodedStateSize ?? 0
        default: break
        }
        var object = JSONObjectWriter(capacity: capacity)
        object.add("source", .string(event.source.rawValue))
        object.addObject("data") { writeData(event.data, into: &$0) }
        return object.finish()
    }

    /// The `data` object of an event, optional fields omitted when absent.
    public static func dataJSON(_ data: EventData) -> JSONValue {
        var o = JSONObject()
        writeData(data, into: &o)
        return .object(o)
    }

    /// The one description of each type's `data` members, for a tree and for bytes alike.
    static func writeData(_ data: EventData, into o: inout some JSONMemberSink) {
        switch data {
        case .request(let r):
            o.add("attributesType", .string(r.attributesType))
            o.add("attributes", r.attributes)
            o.addObject("content") { writeContent(r.content, into: &$0) }
            switch r.pushType {
            case .none?: o.add("pushType", "none")
            case .token?: o.add("pushType", "token")
            case .channel(let id)?: o.addObject("pushType") { $0.add("channel", .string(id)) }
            case nil: break
            }
            if let style = r.style { o.add("style", .string(style.rawValue)) }
            if let start = r.scheduledStart { o.add("scheduledStart", .string(start.rfc3339)) }
            if let origin = r.origin { o.add("origin", .string(origin.rawValue)) }
            if let installation = r.installation { o.add("installation", .string(installation)) }
        case .token(let t), .startToken(let t):
            o.add("token", .string(t.token))
            if let environment = t.environment { o.add("environment", .string(environment.rawValue)) }
        case .update(let u):
            o.addObject("content") { writeContent(u.content, into: &$0) }
            o.add("timestamp", .int(u.timestamp))
            if let alert = u.alert { o.addObject("alert") { writeAlert(alert, into: &$0) } }
            if let priority = u.priority { o.add("priority", .int(Int64(priority))) }
        case .end(let e):
            if let content = e.content { o.addObject("content") { writeContent(content, into: &$0) } }
            o.add("timestamp", .int(e.timestamp))
            switch e.dismissalPolicy {
            case .default?: o.add("dismissalPolicy", "default")
            case .immediate?: o.add("dismissalPolicy", "immediate")
            case .after(let date)?: o.addObject("dismissalPolicy") { $0.add("after", .string(date.rfc3339)) }
            case nil: break
            }
        case .dismiss(let d):
            o.add("by", .string(d.by.rawValue))
        case .push(let p):
            o.add("refersTo", .string(p.refersTo))
            o.add("status", .int(Int64(p.status)))
            if let v = p.reason { o.add("reason", .string(v)) }
            if let v = p.apnsId { o.add("apnsId", .string(v)) }
            if let v = p.token { o.add("token", .string(v)) }
            if let v = p.channel { o.add("channel", .string(v)) }
            if let v = p.priority { o.add("priority", .int(Int64(v))) }
            if let v = p.apnsTimestamp { o.add("apnsTimestamp", .string(v.rfc3339)) }
        case .observe(let ob):
            o.add("activityState", .string(ob.activityState.rawValue))
            if let v = ob.contentTimestamp { o.add("contentTimestamp", .int(v)) }
            if let v = ob.contentHash { o.add("contentHash", .string(v)) }
        case .subscribe(let s):
            o.add("activity", .string(s.activity))
        case .reconcile(let r):
            o.add("run", .string(r.run))
            o.add("action", .string(r.action.rawValue))
            if let v = r.reason { o.add("reason", .string(v)) }
            if let v = r.finding { o.add("finding", .string(v)) }
        }
    }

    static func writeContent(_ content: ActivityContent, into o: inout some JSONMemberSink) {
        o.add("state", content.storedState)
        if let stale = content.staleDate { o.add("staleDate", .string(stale.rfc3339)) }
        if let score = content.relevanceScore { o.add("relevanceScore", .double(score)) }
    }

    static func alertJSON(_ alert: Alert) -> JSONValue {
        var o = JSONObject()
        writeAlert(alert, into: &o)
        return .object(o)
    }

    static func writeAlert(_ alert: Alert, into o: inout some JSONMemberSink) {
        if let v = alert.title { o.add("title", v) }
        if let v = alert.body { o.add("body", v) }
        if let v = alert.sound { o.add("sound", .string(v)) }
    }
}
