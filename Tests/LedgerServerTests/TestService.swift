import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Ledger
import LedgerServer
import LedgerStore
import LedgerTesting
import Logging
import NIOCore

/// One server under test over a REAL ledger file in a temporary directory (the `Ledger` itself),
/// its API key table in the same file, keys of every scope for app `com.example.rides`, an admin key of another
/// app and a revoked key.
struct TestService {
    static let app = "com.example.rides"

    let temporary: TemporaryLedger
    var ledger: Ledger { temporary.ledger }
    let metrics = ServerMetrics()
    let keys: APIKeyStore
    let admin: String
    let ingest: String
    let read: String
    let otherApp: String
    let revoked: String
    var configuration: LedgerServerConfiguration

    init(maxBodyBytes: Int = 64 * 1024) throws {
        temporary = try TemporaryLedger()
        keys = try APIKeyStore(writer: temporary.ledger.pool)
        admin = try keys.create(app: Self.app, scopes: [.admin]).secret
        ingest = try keys.create(app: Self.app, scopes: [.ingest]).secret
        read = try keys.create(app: Self.app, scopes: [.read]).secret
        otherApp = try keys.create(app: "com.example.other", scopes: [.admin]).secret
        let (secret, key) = try keys.create(app: Self.app, scopes: [.admin])
        try keys.revoke(id: key.id)
        revoked = secret
        configuration = LedgerServerConfiguration(
            port: 0, maxBodyBytes: maxBodyBytes, maxFeedWaitSeconds: 5, feedPollInterval: .milliseconds(20)
        )
    }

    /// Runs `body` against the application in Hummingbird's in-process router mode.
    func test(_ body: @Sendable (Client) async throws -> Void) async throws {
        let app = try LedgerServerApp.build(
            configuration: configuration, ledger: temporary.ledger, keys: keys, metrics: metrics,
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        try await app.test(.router) { client in try await body(Client(client: client)) }
    }

    /// What the ledger file holds: each event's app (`""` for none) and id, in position order.
    func stored() throws -> [(app: String, id: String)] {
        var events: [(app: String, id: String)] = []
        try temporary.ledger.store.forEachEvent(after: 0) { recorded in
            let (app, id) = Namespaced.split(recorded.id)
            events.append((app: app, id: id))
            return true
        }
        return events
    }

    /// A client that speaks JSON with a key.
    struct Client: Sendable {
        let client: any TestClientProtocol

        struct Reply: Sendable {
            var status: Int
            var text: String
            var json: JSONValue?
            /// `error.field` and `error.code` of an error reply.
            var errorField: String? { json?["error"]?["field"]?.stringValue }
            var errorCode: String? { json?["error"]?["code"]?.stringValue }
            var errorMessage: String { json?["error"]?["message"]?.stringValue ?? "" }
        }

        func send(
            _ method: HTTPRequest.Method, _ uri: String, key: String?, body: String? = nil,
            contentType: String = "application/json"
        ) async throws -> Reply {
            var headers: HTTPFields = [:]
            if let key { headers[.authorization] = "Bearer \(key)" }
            if body != nil { headers[.contentType] = contentType }
            return try await client.execute(
                uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }
            ) { response in
                let text = String(buffer: response.body)
                return Reply(status: response.status.code, text: text, json: try? JSONValue(json: Data(text.utf8)))
            }
        }

        func get(_ uri: String, key: String?) async throws -> Reply {
            try await send(.get, uri, key: key)
        }

        func post(_ uri: String, key: String?, _ body: String, contentType: String = "application/json") async throws
            -> Reply
        {
            try await send(.post, uri, key: key, body: body, contentType: contentType)
        }
    }
}

/// Event JSON for tests.
enum Sample {
    static func request(_ activity: String, id: String? = nil, attributesType: String = "RideAttributes") -> String {
        let idMember = id.map { #""id":"\#($0)","# } ?? ""
        return
            #"{\#(idMember)"stream":"activity:\#(activity)","type":"request","at":"2026-11-20T21:00:00Z","data":{"attributesType":"\#(attributesType)","attributes":{"ride":"\#(activity)"},"content":{"state":{"eta":5}}}}"#
    }

    static func update(_ activity: String, id: String? = nil, timestamp: Int = 1_763_672_400) -> String {
        let idMember = id.map { #""id":"\#($0)","# } ?? ""
        return
            #"{\#(idMember)"stream":"activity:\#(activity)","type":"update","at":1763672400,"source":"server","data":{"content":{"state":{"eta":3}},"timestamp":\#(timestamp)}}"#
    }
}
