import ActivityModel
import Formats
import Ledger
import NIOCore
import NIOHPACK

/// The proxy's own answer to a push it does not forward, with an APNs-style body `{"reason", "message"}` so
/// that push libraries show it like APNs' own. Nothing refused is sent upstream.
struct ProxyRefusal: Error, Equatable {
    var status: Int
    var reason: String
    var message: String

    init(_ status: Int, _ reason: String, _ message: String) {
        self.status = status
        self.reason = reason
        self.message = message
    }

    var body: ByteBuffer {
        let json: JSONValue = .object(["reason": .string(reason), "message": .string(message)])
        return ByteBuffer(bytes: json.compactBytes)
    }
}

/// What is sent upstream for a push the gate let through, and what of it is recorded.
struct ForwardPlan {
    /// The key's app: the namespace the exchange is recorded in.
    var app: String
    /// `:path` without its query.
    var path: String
    /// The device token of `/3/device/<token>`; nil for a broadcast.
    var token: String?
    /// Every regular request header but ``APNsProxyGate/notForwarded``, lower-case names, in the caller's order.
    var forwarded: [(name: String, value: String)]
    /// The `apns-*` ones (never `authorization`: the caller's JWT is not the ledger's to keep).
    var recorded: [(name: String, value: String)]
}

/// Decides, from a push's HTTP/2 header block and the caller's key, whether the proxy forwards it: one home for
/// the proxy's refusals (README "APNs proxy"), in the order a caller should learn of them: a repeated header
/// (400), the key (401/403), the method (405), the path (404, 400 for a bad token, 403 for another app's
/// broadcast), the topic (400/403); the body's size (413) is checked as it arrives.
enum APNsProxyGate {
    static let keyHeader = "x-ledger-key"
    static let topicHeader = "apns-topic"
    /// APNs takes at most 4 KiB (5 KiB for VoIP); a little room, and nothing a caller can make us buffer.
    static let maxBodyBytes = 64 * 1024
    /// Never forwarded: ours, or about this hop's connection (the upstream stream has its own framing).
    static let notForwarded: Set<String> = [
        "x-ledger-key", "host", "content-length", "connection", "keep-alive", "proxy-connection",
        "transfer-encoding", "te", "upgrade",
    ]
    /// Never copied from APNs' answer: about that hop's framing.
    static let notReturned: Set<String> = ["content-length", "connection", "keep-alive", "transfer-encoding"]
    static let liveActivitySuffix = ".push-type.liveactivity"

    static let missingKey = ProxyRefusal(401, "MissingLedgerKey", "send x-ledger-key: <an API key with ingest scope>")
    static let badKey = ProxyRefusal(401, "BadLedgerKey", "unknown or revoked x-ledger-key")
    /// The key table could not be read (the file is locked past the busy timeout): not the caller's fault.
    static let keysUnavailable = ProxyRefusal(503, "LedgerUnavailable", "the ledger's API keys cannot be read now; retry")
    static let tooLarge = ProxyRefusal(413, "PayloadTooLarge", "the push body is over \(maxBodyBytes) bytes")

    /// The caller's ledger key, or nil when it sent none.
    static func secret(in headers: HPACKHeaders) -> String? {
        headers.first(name: keyHeader)
    }

    /// The plan for a push from a caller with `key` (nil: no live key has the secret it sent).
    static func check(_ headers: HPACKHeaders, key: APIKey?) -> Result<ForwardPlan, ProxyRefusal> {
        if let name = repeatedHeader(in: headers) {
            return .failure(ProxyRefusal(400, "RepeatedHeader", "send \(name) once"))
        }
        guard let key else { return .failure(badKey) }
        guard key.allows(.ingest) else {
            return .failure(ProxyRefusal(403, "LedgerKeyScope", "x-ledger-key \(key.id) lacks scope 'ingest'"))
        }
        guard headers.first(name: ":method") == "POST" else {
            return .failure(ProxyRefusal(405, "MethodNotAllowed", "the APNs provider API takes POST only"))
        }
        let fullPath = headers.first(name: ":path") ?? ""
        let path = String(fullPath.prefix { $0 != "?" })
        let token: String?
        switch PushTarget(path: path) {
        case .some(.device(let device)) where !isToken(device):
            return .failure(ProxyRefusal(400, "BadDeviceToken", "the device token in the path must be 1–200 hex digits"))
        case .some(.device(let device)):
            token = String(device)
            guard let topic = headers.first(name: topicHeader), !topic.isEmpty else {
                return .failure(ProxyRefusal(400, "MissingTopic", "send apns-topic: <bundle id>.push-type.liveactivity"))
            }
            if let refusal = otherApp(topic: topic, key: key) { return .failure(refusal) }
        case .some(.broadcast(let bundle)) where bundle != key.app:
            return .failure(ProxyRefusal(403, "TopicNotKeyApp", "the broadcast path names \(bundle), not the key's app"))
        case .some(.broadcast):
            // The path names the key's app; a topic, when sent, must too (APNs would act on either).
            if let topic = headers.first(name: topicHeader), let refusal = otherApp(topic: topic, key: key) {
                return .failure(refusal)
            }
            token = nil
        case nil:
            return .failure(ProxyRefusal(404, "BadPath", "expected /3/device/<token> or /4/broadcasts/apps/<bundle>"))
        }
        var forwarded: [(name: String, value: String)] = []
        var recorded: [(name: String, value: String)] = []
        for header in headers where !header.name.hasPrefix(":") {
            // HTTP/2 header names are lower-case on the wire (NIOHTTP2 refuses others).
            guard !notForwarded.contains(header.name) else { continue }
            forwarded.append((header.name, header.value))
            if header.name.hasPrefix("apns-") { recorded.append((header.name, header.value)) }
        }
        return .success(ForwardPlan(app: key.app, path: path, token: token, forwarded: forwarded, recorded: recorded))
    }

    /// The first `apns-*` header, or `x-ledger-key`, sent more than once. The gate checks one value (the key,
    /// the topic) and the ledger records one (`apns-id`, `apns-push-type`…), while APNs may act on another: a
    /// push with two of them is refused rather than guessed at.
    static func repeatedHeader(in headers: HPACKHeaders) -> String? {
        var seen: Set<String> = []
        for header in headers where header.name.hasPrefix("apns-") || header.name == keyHeader {
            guard seen.insert(header.name).inserted else { return header.name }
        }
        return nil
    }

    /// `TopicNotKeyApp` when `topic` (minus ``liveActivitySuffix``) is not the key's app.
    private static func otherApp(topic: String, key: APIKey) -> ProxyRefusal? {
        let bundle = topic.hasSuffix(liveActivitySuffix) ? String(topic.dropLast(liveActivitySuffix.count)) : topic
        guard bundle != key.app else { return nil }
        return ProxyRefusal(
            403, "TopicNotKeyApp", "apns-topic names \(bundle), but the x-ledger-key is for another app")
    }

    static func isToken(_ token: Substring) -> Bool {
        (1...200).contains(token.utf8.count) && Hex.isDigits(token.utf8)
    }
}

/// What an APNs provider API path addresses.
enum PushTarget: Equatable {
    case device(Substring)
    case broadcast(Substring)

    init?(path: String) {
        if path.hasPrefix("/3/device/") {
            self = .device(path.dropFirst("/3/device/".count))
        } else if path.hasPrefix("/4/broadcasts/apps/") {
            let bundle = path.dropFirst("/4/broadcasts/apps/".count)
            guard !bundle.isEmpty, !bundle.contains("/") else { return nil }
            self = .broadcast(bundle)
        } else {
            return nil
        }
    }
}

/// What of a request may be logged: a device token by its first 8 characters.
enum LogSafe {
    static func path(_ path: String) -> String {
        guard path.hasPrefix("/3/device/") else { return String(path.prefix(120)) }
        return "/3/device/" + path.dropFirst("/3/device/".count).prefix(8) + "…"
    }
}
