import ActivityModel
import Formats
import Foundation
import HTTPTypes
import Hummingbird
import Ledger
import Logging
import NIOCore

/// Answers one APNs provider API request: authenticates the caller's ledger key, checks the topic against the
/// key's app, forwards the push unchanged (but for `x-ledger-key`) and returns APNs' answer unchanged, then hands
/// the exchange to the recorder. The proxy's own refusals carry an APNs-style body, `{"reason", "message"}`, so
/// that push libraries show them like APNs' own; nothing refused is sent upstream.
struct APNsProxyResponder: HTTPResponder {
    typealias Context = BasicRequestContext

    let keys: APIKeyCache
    let client: APNsClient
    let recorder: APNsRecorder
    let metrics: APNsProxyMetrics

    static let keyHeader = HTTPField.Name("x-ledger-key")!
    static let topicHeader = HTTPField.Name("apns-topic")!
    /// APNs takes at most 4 KiB (5 KiB for VoIP); a little room, and nothing a caller can make us buffer.
    static let maxBodyBytes = 64 * 1024
    /// Never forwarded: ours, or about this hop's connection (the client sets its own).
    static let notForwarded: Set<String> = [
        "x-ledger-key", "host", "content-length", "connection", "keep-alive", "proxy-connection",
        "transfer-encoding", "te", "upgrade",
    ]
    /// Never copied from APNs' answer: about that hop's framing (Hummingbird frames ours).
    static let notReturned: Set<String> = ["content-length", "connection", "keep-alive", "transfer-encoding"]
    static let liveActivitySuffix = ".push-type.liveactivity"

    func respond(to request: Request, context: Context) async throws -> Response {
        let response = try await answer(request)
        metrics.answered(status: response.status.code)
        // One line per push at debug (LOG_LEVEL=debug), as the HTTP API logs its requests; a token by its prefix only.
        context.logger.debug(
            "APNs push answered",
            metadata: [
                "apns.status": .stringConvertible(response.status.code),
                "apns.path": .string(LogSafe.path(request.uri.path)),
            ])
        return response
    }

    private func answer(_ request: Request) async throws -> Response {
        let at = Ledger.now()
        guard let secret = request.headers[Self.keyHeader] else {
            return Self.refusal(.unauthorized, "MissingLedgerKey", "send x-ledger-key: <an API key with ingest scope>")
        }
        let found: APIKey?
        do {
            found = try keys.authenticate(secret)
        } catch {
            // The key table could not be read (the file is locked past the busy timeout): not the caller's fault.
            return Self.refusal(.serviceUnavailable, "LedgerUnavailable", "the ledger's API keys cannot be read now; retry")
        }
        guard let key = found else {
            return Self.refusal(.unauthorized, "BadLedgerKey", "unknown or revoked x-ledger-key")
        }
        guard key.allows(.ingest) else {
            return Self.refusal(.forbidden, "LedgerKeyScope", "x-ledger-key \(key.id) lacks scope 'ingest'")
        }
        guard request.method == .post else {
            return Self.refusal(.methodNotAllowed, "MethodNotAllowed", "the APNs provider API takes POST only")
        }
        let path = request.uri.path
        let target: PushTarget
        switch PushTarget(path: path) {
        case .some(.device(let token)) where !Self.isToken(token):
            return Self.refusal(.badRequest, "BadDeviceToken", "the device token in the path must be 1–200 hex digits")
        case .some(.broadcast(let bundle)) where bundle != key.app:
            return Self.refusal(.forbidden, "TopicNotKeyApp", "the broadcast path names \(bundle), not the key's app")
        case .some(let known):
            target = known
        case nil:
            return Self.refusal(.notFound, "BadPath", "expected /3/device/<token> or /4/broadcasts/apps/<bundle>")
        }
        if case .device = target {
            guard let topic = request.headers[Self.topicHeader], !topic.isEmpty else {
                return Self.refusal(.badRequest, "MissingTopic", "send apns-topic: <bundle id>.push-type.liveactivity")
            }
            let bundle = topic.hasSuffix(Self.liveActivitySuffix) ? String(topic.dropLast(Self.liveActivitySuffix.count)) : topic
            guard bundle == key.app else {
                return Self.refusal(
                    .forbidden, "TopicNotKeyApp", "apns-topic names \(bundle), but the x-ledger-key is for another app")
            }
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: Self.maxBodyBytes)
        } catch {
            return Self.refusal(.contentTooLarge, "PayloadTooLarge", "the push body is over \(Self.maxBodyBytes) bytes")
        }

        var forwarded: [(name: String, value: String)] = []
        var recordedHeaders: [(name: String, value: String)] = []
        for field in request.headers {
            let name = field.name.canonicalName
            guard !Self.notForwarded.contains(name) else { continue }
            forwarded.append((name, field.value))
            if name.hasPrefix("apns-") { recordedHeaders.append((name, field.value)) }
        }
        let reply: APNsAnswer
        do {
            reply = try await client.send(APNsOutgoing(path: path, headers: forwarded, body: body))
        } catch {
            metrics.upstreamFailed()
            return Self.refusal(.badGateway, "UpstreamUnavailable", "APNs did not answer: \(error.message)")
        }
        var token: String?
        if case .device(let device) = target { token = String(device) }
        // APNs always answers an apns-id; should it not, one is fixed here so that a replayed journal line records
        // the same event ids.
        let apnsID =
            reply.header("apns-id") ?? recordedHeaders.first { $0.name == "apns-id" }?.value
            ?? UUID().uuidString.lowercased()
        recorder.submit(
            ProxiedExchange(
                app: key.app, at: at, token: token, headers: recordedHeaders, body: Array(buffer: body),
                status: reply.status, apnsID: apnsID, answerBody: Array(buffer: reply.body)))

        var headers = HTTPFields()
        for header in reply.headers where !Self.notReturned.contains(header.name) {
            if let name = HTTPField.Name(header.name) { headers.append(HTTPField(name: name, value: header.value)) }
        }
        return Response(status: .init(code: reply.status), headers: headers, body: .init(byteBuffer: reply.body))
    }

    static func isToken(_ token: Substring) -> Bool {
        (1...200).contains(token.utf8.count) && Hex.isDigits(token.utf8)
    }

    static func refusal(_ status: HTTPResponse.Status, _ reason: String, _ message: String) -> Response {
        let json: JSONValue = .object(["reason": .string(reason), "message": .string(message)])
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: json.compactBytes)))
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
