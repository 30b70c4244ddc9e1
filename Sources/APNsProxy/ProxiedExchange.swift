import ActivityModel

/// One push the proxy forwarded and APNs' answer, as kept for recording (off the response path).
struct ProxiedExchange: Sendable {
    /// The app of the caller's key: the namespace it is recorded in.
    var app: String
    /// When the proxy received the push: the `at` of both recorded events.
    var at: Instant
    /// `/3/device/<token>`'s token; nil for a broadcast.
    var token: String?
    /// The `apns-*` request headers (never `authorization`: the caller's JWT is not the ledger's to keep).
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    var status: Int
    var apnsID: String?
    /// APNs' error body (`{"reason", "timestamp"}`), when there is one.
    var answerBody: [UInt8]
    /// The journal file that keeps it until it is finished (``RecordingJournal``).
    var generation: Int?
    /// Why it is held for another try.
    var heldFor: HeldFor?

    enum HeldFor: Sendable, Equatable { case unknownToken, storage }

    /// The exchange in the shape `POST /v1/apns` takes, so that `Ledger.ingestAPNs` maps and validates it
    /// exactly as it does that door's. Nil (with the reason) when the push body is not JSON: nothing to map.
    func document() -> (JSONValue?, String?) {
        let payload: JSONValue
        do {
            payload = try JSONParser.parse(body)
        } catch {
            return (nil, "push body is not JSON: \(error)")
        }
        var headerObject = JSONObject()
        for header in headers { headerObject[header.name] = .string(header.value) }
        var request = JSONObject()
        if let token { request["token"] = .string(token) }
        request["headers"] = .object(headerObject)
        request["payload"] = payload
        var response = JSONObject()
        response["status"] = .int(Int64(status))
        if let apnsID { response["apnsId"] = .string(apnsID) }
        if !answerBody.isEmpty, let answer = try? JSONParser.parse(answerBody) {
            if let reason = answer["reason"] { response["reason"] = reason }
            if let timestamp = answer["timestamp"] { response["timestamp"] = timestamp }
        }
        var exchange = JSONObject()
        exchange["at"] = .string(at.rfc3339)
        exchange["request"] = .object(request)
        exchange["response"] = .object(response)
        return (.object(exchange), nil)
    }
}
