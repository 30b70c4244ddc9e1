import ActivityModel
import Foundation
import Ledger
import NIOCore

/// One planned reconciliation action with a payload to push.
public struct APNsAction: Sendable {
    public var activity: String
    public var action: ReconcileAction
    /// `{"aps": …}`.
    public var payload: JSONValue
    /// The device token to push to; nil: nothing can be sent.
    public var token: String?

    public init(activity: String, action: ReconcileAction, payload: JSONValue, token: String?) {
        self.activity = activity
        self.action = action
        self.payload = payload
        self.token = token
    }
}

/// What happened to one action.
public struct APNsSendOutcome: Sendable {
    public enum Result: Sendable, Equatable {
        /// APNs answered (any status); the push is recorded.
        case answered(status: Int, reason: String?)
        /// An earlier run sent it (its push is recorded, or its answer never was): not sent again.
        case alreadySent(recorded: Bool)
        /// The activity has no push token.
        case noToken
        /// APNs could not be reached; recorded as sent without an answer, so it is not sent again either.
        case unanswered(String)
    }

    public var activity: String
    public var action: ReconcileAction
    public var apnsID: String
    public var result: Result

    public var json: JSONValue {
        var object = JSONObject()
        object["activity"] = .string(activity)
        object["action"] = .string(action.rawValue)
        object["apnsId"] = .string(apnsID)
        switch result {
        case .answered(let status, let reason):
            object["result"] = "answered"
            object["status"] = .int(Int64(status))
            object["reason"] = reason.map(JSONValue.string) ?? .null
        case .alreadySent(let recorded):
            object["result"] = "alreadySent"
            object["answerRecorded"] = .bool(recorded)
        case .noToken: object["result"] = "noToken"
        case .unanswered(let message):
            object["result"] = "unanswered"
            object["message"] = .string(message)
        }
        return .object(object)
    }
}

/// Sends reconciliation actions to APNs through ``APNsClient`` and records each push with `Ledger.ingestAPNs`, at
/// most once per (run, activity, action) across re-runs.
///
/// The `apns-id` of an action derives from its run, activity and action, and so do the ids of the events that
/// record it. The carried `update`/`end` is recorded *before* the push is sent and the push with APNs' answer
/// after: a re-run finds either and sends nothing. A run killed between sending and recording the answer leaves
/// the content recorded without a push (its verdict stays `pending`), and is not sent again — at most once, never
/// twice.
public struct APNsActionSender: Sendable {
    let ledger: Ledger
    public let client: APNsClient
    let signer: APNsTokenSigner
    let topic: String
    let app: String?

    /// - Parameter topic: `apns-topic`; `.push-type.liveactivity` is added when missing.
    public init(ledger: Ledger, client: APNsClient, signer: APNsTokenSigner, topic: String, app: String?) {
        self.ledger = ledger
        self.client = client
        self.signer = signer
        self.topic = topic.hasSuffix(".push-type.liveactivity") ? topic : topic + ".push-type.liveactivity"
        self.app = app
    }

    /// Sends `actions` in order. Before the first one that would be sent, one probe (`POST /3/device/` with no
    /// token, which APNs refuses without delivering anything) checks that APNs answers and takes the provider
    /// token: when it does not, this throws ``APNsProxyError`` (`upstream`) having sent and recorded nothing, so a
    /// wrong `--apns-upstream`, CA or key never marks actions as sent.
    public func send(_ actions: [APNsAction], run: String) async throws -> [APNsSendOutcome] {
        var outcomes: [APNsSendOutcome] = []
        var probed = false
        for action in actions {
            outcomes.append(
                try await send(action, run: run) {
                    guard !probed else { return }
                    try await probe()
                    probed = true
                })
        }
        return outcomes
    }

    /// APNs answers at all, and does not refuse the provider token.
    func probe() async throws {
        let jwt = try signer.token()
        let answer = try await client.send(
            APNsOutgoing(
                path: "/3/device/",
                headers: [("authorization", "bearer \(jwt)"), ("apns-topic", topic), ("apns-push-type", "liveactivity")],
                body: ByteBuffer(string: "{}")))
        let reason = (try? JSONParser.parse(Array(buffer: answer.body)))?["reason"]?.stringValue ?? ""
        if answer.status == 403, reason.hasSuffix("ProviderToken") || reason == "InvalidProviderToken" {
            throw APNsProxyError(
                .upstream, "\(client.upstream) refused the provider token (\(reason)): check --apns-key-file, --apns-key-id and --apns-team-id; nothing was sent")
        }
    }

    private func send(_ action: APNsAction, run: String, beforeSending: () async throws -> Void) async throws
        -> APNsSendOutcome
    {
        let apnsID = DerivedID.uuid("send:\(run):\(action.activity):\(action.action.rawValue)")
        var outcome = APNsSendOutcome(activity: action.activity, action: action.action, apnsID: apnsID, result: .noToken)
        if (try? await ledger.event(id: DerivedID.uuid("apns:\(apnsID):push"), app: app)) != nil {
            outcome.result = .alreadySent(recorded: true)
            return outcome
        }
        if (try? await ledger.event(id: DerivedID.uuid("apns:\(apnsID):content"), app: app)) != nil {
            outcome.result = .alreadySent(recorded: false)
            return outcome
        }
        guard let token = action.token else { return outcome }
        do {
            try await beforeSending()
        } catch let error as APNsProxyError {
            throw APNsProxyError(.upstream, "APNs did not answer a probe: \(error.message); nothing was sent")
        }
        let headers: [(name: String, value: String)] = [
            ("apns-push-type", "liveactivity"), ("apns-topic", topic), ("apns-priority", "10"), ("apns-id", apnsID),
        ]
        let at = Ledger.now()
        // First the content, through the same mapping as every APNs door (no push yet: it is not answered).
        let carried = try APNsMapping.events(
            request: APNsRequest(path: "/3/device/\(token)", headers: Dictionary(headers, uniquingKeysWith: { $1 }), body: action.payload),
            response: APNsResponse(status: 200), activity: action.activity, at: at,
            eventID: DerivedID.uuid("apns:\(apnsID):content"), pushID: DerivedID.uuid("apns:\(apnsID):push"))
        _ = try await ledger.append([carried[0]], app: app)

        let body = ByteBuffer(bytes: action.payload.compactBytes)
        let answer: APNsAnswer
        do {
            let jwt = try signer.token()
            answer = try await client.send(
                APNsOutgoing(path: "/3/device/\(token)", headers: headers + [("authorization", "bearer \(jwt)")], body: body))
        } catch let error as APNsProxyError {
            outcome.result = .unanswered(error.message)
            return outcome
        }
        let exchange = ProxiedExchange(
            app: app ?? "", at: at, token: token, headers: headers, body: action.payload.compactBytes,
            status: answer.status, apnsID: apnsID, answerBody: Array(buffer: answer.body))
        guard case .object(var document)? = try? exchange.document(token: token) else { return outcome }
        document["activity"] = .string(action.activity)
        _ = try await ledger.ingestAPNs(.object(document), app: app)
        let reason = (try? JSONParser.parse(Array(buffer: answer.body)))?["reason"]?.stringValue
        outcome.result = .answered(status: answer.status, reason: reason)
        return outcome
    }
}
