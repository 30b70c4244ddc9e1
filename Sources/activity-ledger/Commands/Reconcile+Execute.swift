import APNsProxy
import ActivityModel
import ArgumentParser
import Foundation
import Ledger

/// `reconcile … --execute`: send the planned actions' payloads to APNs and record each push (README "APNs proxy").
struct APNsSendOptions: ParsableArguments {
    @Flag(help: "Send each planned update/end/endDuplicate to APNs and record the push; a re-run sends nothing twice.")
    var execute = false

    @Option(help: "The APNs auth key (.p8, P-256 in PEM) that signs the provider token (ES256).")
    var apnsKeyFile: String?

    @Option(help: "The key's id (10 characters, from the Apple developer account).")
    var apnsKeyId: String?

    @Option(help: "The team id (10 characters) the key belongs to.")
    var apnsTeamId: String?

    @Option(help: "The app's bundle id (apns-topic; .push-type.liveactivity is added). [default: --app]")
    var apnsTopic: String?

    @Option(help: "production, sandbox or https://host[:port]. [default: production]")
    var apnsUpstream: String?

    @Option(help: "A PEM file of CA certificates to trust for the upstream besides the system's.")
    var apnsCa: String?

    /// The sender, or nil without --execute; APNs options without --execute are a usage error.
    func sender(ledger: Ledger, app: String?) throws -> APNsActionSender? {
        guard execute else {
            let given = [
                apnsKeyFile.map { _ in "--apns-key-file" }, apnsKeyId.map { _ in "--apns-key-id" },
                apnsTeamId.map { _ in "--apns-team-id" }, apnsTopic.map { _ in "--apns-topic" },
                apnsUpstream.map { _ in "--apns-upstream" }, apnsCa.map { _ in "--apns-ca" },
            ].compactMap { $0 }
            if let first = given.first { throw ValidationError("\(first) needs --execute") }
            return nil
        }
        guard let apnsKeyFile else { throw ValidationError("--execute needs --apns-key-file") }
        guard let apnsKeyId else { throw ValidationError("--execute needs --apns-key-id") }
        guard let apnsTeamId else { throw ValidationError("--execute needs --apns-team-id") }
        guard let topic = apnsTopic ?? app else { throw ValidationError("--execute needs --apns-topic (or --app)") }
        do {
            let signer = try APNsTokenSigner(p8: apnsKeyFile, keyID: apnsKeyId, teamID: apnsTeamId)
            let client = try APNsClient(upstream: try APNsUpstream(parsing: apnsUpstream ?? "production"), extraCA: apnsCa)
            return APNsActionSender(ledger: ledger, client: client, signer: signer, topic: topic, app: app)
        } catch {
            throw ValidationError(error.message)
        }
    }
}

extension APNsActionSender {
    /// Sends, then closes the client's connections. APNs unreachable (or refusing the provider token) before
    /// anything was sent: one line on stderr, exit 4, after the report is printed by `printReport`.
    func execute(_ actions: [APNsAction], run: String, printReport: () -> Void) async throws -> [APNsSendOutcome] {
        let outcomes: [APNsSendOutcome]
        do {
            outcomes = try await send(actions, run: run)
        } catch let error as APNsProxyError {
            try? await client.shutdown()
            printReport()
            printFailure(error.message)
            throw ExitCode(Exit.storage)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try? await client.shutdown()
        return outcomes
    }
}

enum ExecutedText {
    /// One line per action: what was sent and what APNs answered.
    static func render(_ outcomes: [APNsSendOutcome]) -> String {
        guard !outcomes.isEmpty else { return "executed: no action to send" }
        return (["executed:"] + outcomes.map { outcome in
            let what: String =
                switch outcome.result {
                case .answered(let status, let reason): "sent, APNs answered \(status)\(reason.map { " \($0)" } ?? "")"
                case .alreadySent(true): "not sent: an earlier run sent it (recorded)"
                case .alreadySent(false): "not sent: an earlier run sent it and its answer was not recorded"
                case .noToken: "not sent: the activity has no push token"
                case .unanswered(let message): "not answered: \(message) (recorded as sent; not sent again)"
                }
            return "  \(outcome.activity) \(outcome.action.rawValue): \(what)"
        }).joined(separator: "\n")
    }

    /// The report's JSON with `executed` added.
    static func json(_ report: JSONValue, _ outcomes: [APNsSendOutcome]) -> JSONValue {
        guard case .object(var object) = report else { return report }
        object["executed"] = .array(outcomes.map(\.json))
        return .object(object)
    }
}
