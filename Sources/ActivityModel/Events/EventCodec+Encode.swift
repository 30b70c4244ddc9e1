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
    public static func encodePayload(_ event: LedgerEvent) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(.object(["source": .string(event.source.rawValue), "data": dataJSON(event.data)]))
        return writer.bytes
    }

    /// The `data` object of an event, optional fields omitted when absent.
    public static func dataJSON(_ data: EventData) -> JSONValue {
        var o = JSONObject()
        switch data {
        case .request(let r):
            o["attributesType"] = .string(r.attributesType)
            o["attributes"] = r.attributes
            o["content"] = contentJSON(r.content)
            switch r.pushType {
            case .none?: o["pushType"] = "none"
            case .token?: o["pushType"] = "token"
            case .channel(let id)?: o["pushType"] = .object(["channel": .string(id)])
            case nil: break
            }
            if let style = r.style { o["style"] = .string(style.rawValue) }
            if let start = r.scheduledStart { o["scheduledStart"] = .string(start.rfc3339) }
            if let origin = r.origin { o["origin"] = .string(origin.rawValue) }
            if let installation = r.installation { o["installation"] = .string(installation) }
        case .token(let t), .startToken(let t):
            o["token"] = .string(t.token)
            if let environment = t.environment { o["environment"] = .string(environment.rawValue) }
        case .update(let u):
            o["content"] = contentJSON(u.content)
            o["timestamp"] = .int(u.timestamp)
            if let alert = u.alert { o["alert"] = alertJSON(alert) }
            if let priority = u.priority { o["priority"] = .int(Int64(priority)) }
        case .end(let e):
            if let content = e.content { o["content"] = contentJSON(content) }
            o["timestamp"] = .int(e.timestamp)
            switch e.dismissalPolicy {
            case .default?: o["dismissalPolicy"] = "default"
            case .immediate?: o["dismissalPolicy"] = "immediate"
            case .after(let date)?: o["dismissalPolicy"] = .object(["after": .string(date.rfc3339)])
            case nil: break
            }
        case .dismiss(let d):
            o["by"] = .string(d.by.rawValue)
        case .push(let p):
            o["refersTo"] = .string(p.refersTo)
            o["status"] = .int(Int64(p.status))
            if let v = p.reason { o["reason"] = .string(v) }
            if let v = p.apnsId { o["apnsId"] = .string(v) }
            if let v = p.token { o["token"] = .string(v) }
            if let v = p.channel { o["channel"] = .string(v) }
            if let v = p.priority { o["priority"] = .int(Int64(v)) }
            if let v = p.apnsTimestamp { o["apnsTimestamp"] = .string(v.rfc3339) }
        case .observe(let ob):
            o["activityState"] = .string(ob.activityState.rawValue)
            if let v = ob.contentTimestamp { o["contentTimestamp"] = .int(v) }
            if let v = ob.contentHash { o["contentHash"] = .string(v) }
        case .subscribe(let s):
            o["activity"] = .string(s.activity)
        case .reconcile(let r):
            o["run"] = .string(r.run)
            o["action"] = .string(r.action.rawValue)
            if let v = r.reason { o["reason"] = .string(v) }
            if let v = r.finding { o["finding"] = .string(v) }
        }
        return .object(o)
    }

    public static func contentJSON(_ content: ActivityContent) -> JSONValue {
        var o = JSONObject()
        o["state"] = content.state
        if let stale = content.staleDate { o["staleDate"] = .string(stale.rfc3339) }
        if let score = content.relevanceScore { o["relevanceScore"] = .double(score) }
        return .object(o)
    }

    static func alertJSON(_ alert: Alert) -> JSONValue {
        var o = JSONObject()
        if let v = alert.title { o["title"] = v }
        if let v = alert.body { o["body"] = v }
        if let v = alert.sound { o["sound"] = .string(v) }
        return .object(o)
    }
}
