extension APNsMapping {
    /// A raw APNs `liveactivity` request and its response → the carried `request`/`update`/`end` event
    /// (source `server`) followed by the `push` event (source `apns`) that refers to it.
    ///
    /// - Parameters:
    ///   - activity: the activity a token push targets (APNs does not name it). Ignored for broadcasts, which
    ///     go to the `channel:<apns-channel-id>` stream.
    ///   - at: when the request was sent; both events get this time.
    ///   - eventID / pushID: ids for the two events (idempotency keys; derive them from `apns-id` to make
    ///     re-ingestion a no-op).
    /// - Throws: `EventDecodingError` naming the header or `aps` field that is wrong.
    public static func events(
        request: APNsRequest, response: APNsResponse, activity: String?, at: Instant, eventID: String,
        pushID: String
    ) throws(EventDecodingError) -> [LedgerEvent] {
        if let pushType = request.headers["apns-push-type"], pushType != "liveactivity" {
            throw EventDecodingError(
                code: .unknownValue, field: "headers.apns-push-type", expected: "liveactivity", found: "\"\(pushType)\"")
        }
        let aps = try parse(request.body)
        let channel = request.channelID
        let stream: StreamName
        if let channel {
            guard aps.event != .start else {
                throw EventDecodingError(
                    code: .streamMismatch, field: "aps.event", expected: "update or end (a broadcast cannot start an activity)",
                    found: "\"start\"")
            }
            stream = .channel(channel)
        } else {
            guard let activity, !activity.isEmpty else {
                throw EventDecodingError(code: .missingField, field: "activity", expected: "the activity a token push targets")
            }
            stream = .activity(activity)
        }
        let data: EventData
        switch aps.event {
        case .start:
            var pushType: PushType?
            if let channel = aps.inputPushChannel {
                pushType = .channel(channel)
            } else if aps.inputPushToken {
                pushType = .token
            }
            // `parse` guarantees content, type and attributes for a start.
            data = .request(
                RequestData(
                    attributesType: aps.attributesType ?? "", attributes: aps.attributes ?? .object(JSONObject()),
                    content: aps.content ?? ActivityContent(state: .object(JSONObject())), pushType: pushType,
                    origin: .pushToStart))
        case .update:
            let priority = request.headers["apns-priority"].flatMap { Int($0) }
            data = .update(
                UpdateData(
                    content: aps.content ?? ActivityContent(state: .object(JSONObject())), timestamp: aps.timestamp,
                    alert: aps.alert, priority: priority == 5 || priority == 10 ? priority : nil))
        case .end:
            data = .end(
                EndData(
                    content: aps.content, timestamp: aps.timestamp,
                    dismissalPolicy: aps.dismissalDate.map { .after($0) } ?? .default))
        }
        let carried = LedgerEvent(id: eventID, stream: stream, at: at, source: .server, data: data)

        var apnsTimestamp: Instant?
        if case .number(let n)? = response.body?["timestamp"] { apnsTimestamp = Instant(unixMilliseconds: n) }
        let priority = request.headers["apns-priority"].flatMap { Int($0) }
        let push = PushData(
            refersTo: eventID, status: response.status, reason: response.body?["reason"]?.stringValue,
            apnsId: response.headers["apns-id"] ?? request.headers["apns-id"], token: request.deviceToken,
            channel: channel, priority: priority == 5 || priority == 10 ? priority : nil, apnsTimestamp: apnsTimestamp)
        return [carried, LedgerEvent(id: pushID, stream: stream, at: at, source: .apns, data: .push(push))]
    }
}
