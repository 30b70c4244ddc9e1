import ActivityModel
import Ledger

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

    /// The spellings of ``token`` to attribute the push by, in order. APNs tokens are hex, whose case APNs
    /// ignores, while the ledger's token index matches a token exactly as the app reported it (most apps report
    /// lower-case, `%02x`): lower-case first, then as sent, then upper-case. `[nil]` for a broadcast.
    var tokenSpellings: [String?] {
        guard let token else { return [nil] }
        var spellings: [String] = []
        for spelling in [token.lowercased(), token, token.uppercased()] where !spellings.contains(spelling) {
            spellings.append(spelling)
        }
        return spellings
    }

    /// The exchange in the shape `POST /v1/apns` takes, with `token` (one of ``tokenSpellings``), so that
    /// `Ledger.ingestAPNs` maps and validates it exactly as it does that door's.
    /// - Throws: `LedgerError` `badInput` when the push body is not JSON: nothing to map.
    func document(token: String?) throws -> JSONValue {
        let payload: JSONValue
        do {
            payload = try JSONParser.parse(body)
        } catch {
            throw LedgerError(.badInput, "push body is not JSON: \(error)")
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
        return .object(exchange)
    }
}
