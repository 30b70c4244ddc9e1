import ActivityModel
import Formats
import Foundation
import LedgerStore

extension Ledger {
    /// Records a raw APNs `liveactivity` exchange: the `request`/`update`/`end` the push carried and the `push`
    /// event with APNs' answer (SPEC §2 "Raw APNs traffic").
    ///
    /// `exchange` is `{"activity"?, "at"?, "request": {"token"?, "channel"?, "headers": {…}, "payload": {"aps": …}},
    /// "response": {"status", "apnsId"?, "reason"?, "timestamp"?}}`. A token push without `activity` is resolved
    /// through the token index (every token ever seen on an activity). Ids derive from `apns-id`, so ingesting
    /// the same exchange twice is a no-op.
    ///
    /// Another exchange under an `apns-id` already recorded — a retry after a 429 or 5xx, or another push reusing
    /// the id — is recorded too (found: it was refused as an id conflict, so after 429 then 200 the audit still
    /// said rejected). Its push gets ids from the `apns-id` and `attempt` (the exchange's own key, e.g. the APNs
    /// proxy's journaled one; default its `at` in milliseconds), so ingesting that exchange again is a no-op as
    /// well. When it carried the update already recorded, its push refers to that event, so the best attempt
    /// decides the verdict (SPEC §4); other content is recorded as an event of its own.
    public func ingestAPNs(_ exchange: JSONValue, app: String? = nil, attempt: String? = nil) async throws
        -> [AppendOutcome]
    {
        let request = try Self.member(exchange, "request")
        let response = try Self.member(exchange, "response")
        guard let headers = request["headers"]?.objectValue else {
            throw LedgerError(.badInput, "request.headers: expected an object of header strings", field: "request.headers")
        }
        guard let payload = request["payload"], payload.objectValue != nil else {
            throw LedgerError(.badInput, "request.payload: expected the APNs JSON body (an object with aps)", field: "request.payload")
        }
        guard let status = response["status"]?.numberValue?.int64Value, PushData.statuses.contains(status) else {
            throw LedgerError(
                .badInput, "response.status: expected an HTTP status code (an integer 100–599)", field: "response.status")
        }
        var headerMap: [String: String] = [:]
        for member in headers.members {
            guard let value = member.value.stringValue else {
                throw LedgerError(.badInput, "request.headers.\(member.key): expected a string", field: "request.headers.\(member.key)")
            }
            headerMap[member.key.lowercased()] = value
        }
        var token = request["token"]?.stringValue
        if let channel = request["channel"]?.stringValue { headerMap["apns-channel-id"] = channel }
        // JSON null is "not given" for every optional member (openapi), as for events: the exchange is read as sent.
        let at: Instant
        if let given = exchange["at"], !given.isNull { at = try Self.instant(given) } else { at = Self.now() }
        var activity = exchange["activity"]?.stringValue
        let namespace = try Self.namespace(app)
        if activity == nil, let sent = token, headerMap["apns-channel-id"] == nil {
            // The token index holds the app's own tokens only (`ProjectionEvent.qualified`), as the app reported
            // them; APNs takes a token in either hex case, so the push is recorded under the first spelling the
            // ledger knows (`tokenSpellings`), for `/v1/apns` and the proxy alike.
            let found = try await read { db -> (activity: String, token: String)? in
                for spelling in Self.tokenSpellings(sent) {
                    if let key = try db.activity(withToken: Namespaced.qualify(spelling, app: namespace)) {
                        return (Namespaced.name(key), spelling)
                    }
                }
                return nil
            }
            guard let found else {
                throw LedgerError(.notFound, "no activity has push token \(sent.prefix(8))…; give \"activity\"", field: "request.token")
            }
            (activity, token) = (found.activity, found.token)
        }
        var responseHeaders: [String: String] = [:]
        if let apnsId = response["apnsId"]?.stringValue { responseHeaders["apns-id"] = apnsId }
        var body = JSONObject()
        if let reason = response["reason"], !reason.isNull { body.members.append(.init(key: "reason", value: reason)) }
        if let timestamp = response["timestamp"], !timestamp.isNull {
            // Found: an out-of-range or RFC 3339 timestamp was dropped without a word, and the token then died at
            // the push's time. SPEC §3 takes Unix milliseconds or RFC 3339; anything else is the client's mistake.
            guard let milliseconds = Self.apnsMilliseconds(timestamp) else {
                throw LedgerError(
                    .badInput,
                    "response.timestamp: expected Unix milliseconds (an integer, years 0000–9999) or an RFC 3339 time",
                    field: "response.timestamp")
            }
            body.members.append(.init(key: "timestamp", value: .int(milliseconds)))
        }
        let apnsID = responseHeaders["apns-id"] ?? headerMap["apns-id"] ?? CanonicalUUID.random()
        func events(contentID: String, pushID: String) throws -> [LedgerEvent] {
            do {
                return try APNsMapping.events(
                    request: APNsRequest(path: token.map { "/3/device/\($0)" }, headers: headerMap, body: payload),
                    response: APNsResponse(
                        status: Int(status), headers: responseHeaders, body: body.isEmpty ? nil : .object(body)),
                    activity: activity, at: at, eventID: contentID, pushID: pushID)
            } catch {
                throw LedgerError(.badInput, error.description, field: error.field)
            }
        }
        let contentID = DerivedID.uuid("apns:\(apnsID):content")
        do {
            return try await append(try events(contentID: contentID, pushID: DerivedID.uuid("apns:\(apnsID):push")), app: app)
        } catch let error as LedgerError where (error.cause as? StoreError)?.code == .idConflict {
            let attempt = attempt ?? String(at.milliseconds)
            let pushID = DerivedID.uuid("apns:\(apnsID):\(attempt):push")
            var retry = try events(contentID: contentID, pushID: pushID)
            let recorded: LedgerEvent?
            do {
                recorded = try await event(id: contentID, app: app).event
            } catch let error as LedgerError where error.code == .notFound {
                recorded = nil
            }
            if let recorded, recorded.stream == retry[0].stream, recorded.data == retry[0].data {
                retry.removeFirst()
            } else {
                retry = try events(contentID: DerivedID.uuid("apns:\(apnsID):\(attempt):content"), pushID: pushID)
            }
            return try await append(retry, app: app)
        }
    }

    /// The spellings a push's device token is looked up under, in order: lower case (what apps report), as sent,
    /// upper case — each once. APNs treats the hex case alike; the ledger's token index matches exactly (found: a
    /// push to `/3/device/ABCDEF01` was never recorded when the app had reported `abcdef01`).
    public static func tokenSpellings(_ token: String) -> [String] {
        var spellings: [String] = []
        for spelling in [token.lowercased(), token, token.uppercased()] where !spellings.contains(spelling) {
            spellings.append(spelling)
        }
        return spellings
    }

    /// A 410 `timestamp` as APNs gives it (Unix milliseconds) or as RFC 3339, in whole milliseconds; nil when it is
    /// neither, or out of the ledger's years. The one rule for `/v1/apns` and the APNs proxy.
    public static func apnsMilliseconds(_ timestamp: JSONValue) -> Int64? {
        switch timestamp {
        case .number(let number): Instant(unixMilliseconds: number)?.milliseconds
        case .string(let text): Instant(rfc3339: text)?.milliseconds
        default: nil
        }
    }

    private static func member(_ exchange: JSONValue, _ name: String) throws -> JSONObject {
        guard let object = exchange[name]?.objectValue else {
            throw LedgerError(.badInput, "\(name): expected an object", field: name)
        }
        return object
    }

    static func instant(_ value: JSONValue) throws -> Instant {
        guard let instant = Instant(json: value) else {
            throw LedgerError(.badInput, "at: expected an RFC 3339 time or Unix seconds (years 0000–9999)", field: "at")
        }
        return instant
    }
}
