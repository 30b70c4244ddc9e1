import ActivityModel
import Formats
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
    /// This exchange among those sharing its `apns-id` (a retry after 429/5xx reuses it): minted when APNs
    /// answered and journaled, so that a replay records the same event ids.
    var key = CanonicalUUID.random()

    enum HeldFor: Sendable, Equatable { case unknownToken, storage }

    /// The exchange in the shape `POST /v1/apns` takes, with `token`, so that
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
        var response = answer()
        response["status"] = .int(Int64(status))
        if let apnsID { response["apnsId"] = .string(apnsID) }
        var exchange = JSONObject()
        exchange["at"] = .string(at.rfc3339)
        exchange["request"] = .object(request)
        exchange["response"] = .object(response)
        return .object(exchange)
    }

    /// What of APNs' error body is recorded: `reason` and the 410 `timestamp`.
    private func answer() -> JSONObject {
        var fields = JSONObject()
        if !answerBody.isEmpty, let answer = try? JSONParser.parse(answerBody) {
            if let reason = answer["reason"] { fields["reason"] = reason }
            if let timestamp = answer["timestamp"].flatMap(Self.milliseconds) { fields["timestamp"] = .int(timestamp) }
        }
        return fields
    }

    /// APNs' answer has a `timestamp` that is no time the ledger can hold: the push is recorded without it, so
    /// the token dies at the push's time (SPEC §4), and the recorder counts and logs it.
    var unusableTimestamp: Bool {
        guard !answerBody.isEmpty, let timestamp = (try? JSONParser.parse(answerBody))?["timestamp"] else {
            return false
        }
        return Self.milliseconds(timestamp) == nil
    }

    /// A 410 `timestamp` as Unix milliseconds, the form the mapping reads: the ledger's rule
    /// (`Ledger.apnsMilliseconds`: APNs' integer or an RFC 3339 string, in the years 0000–9999), after a fraction
    /// is cut to the millisecond (which the proxy records rather than refuses).
    static func milliseconds(_ timestamp: JSONValue) -> Int64? {
        if case .number(let number) = timestamp, number.int64Value == nil {
            // 1e17 bounds the conversion; the ledger's rule checks the range.
            let double = number.doubleValue
            guard double.isFinite, abs(double) < 1e17 else { return nil }
            return Ledger.apnsMilliseconds(.int(Int64(double.rounded(.down))))
        }
        return Ledger.apnsMilliseconds(timestamp)
    }
}
