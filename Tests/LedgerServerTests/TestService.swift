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
import Testing

/// One server under test over a REAL ledger file in a temporary directory (the `Ledger` itself), its API key
/// table in the same file, keys of every scope for `app`, an admin key of `otherApp` and a revoked key.
struct TestService {
    static let app = "com.example.rides"
    static let otherApp = "com.example.other"

    let temporary: TemporaryLedger
    var ledger: Ledger { temporary.ledger }
    let metrics = ServerMetrics()
    let keys: APIKeyStore
    let admin: String
    let ingest: String
    let read: String
    let otherAdmin: String
    let revoked: String
    var configuration: LedgerServerConfiguration

    init(maxBodyBytes: Int = 64 * 1024) throws {
        // Queries handed to the ledger's read threads, as `serve` configures its ledger.
        temporary = try TemporaryLedger(queriesOnCallerThread: false)
        keys = try APIKeyStore(writer: temporary.ledger.pool)
        admin = try keys.create(app: Self.app, scopes: [.admin]).secret
        ingest = try keys.create(app: Self.app, scopes: [.ingest]).secret
        read = try keys.create(app: Self.app, scopes: [.read]).secret
        otherAdmin = try keys.create(app: Self.otherApp, scopes: [.admin]).secret
        let (secret, key) = try keys.create(app: Self.app, scopes: [.admin])
        try keys.revoke(id: key.id)
        revoked = secret
        configuration = LedgerServerConfiguration(
            port: 0, maxBodyBytes: maxBodyBytes, maxFeedWaitSeconds: 5, feedPollInterval: .milliseconds(20)
        )
    }

    /// The two ways a suite reaches the server, as test arguments: `TestingSetup` itself prints no readable
    /// name in test results.
    enum Mode: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// Hummingbird's in-process router: no sockets, quick.
        case router
        /// A real HTTP server on a loopback port: what a client meets (channel handlers, framing, timeouts).
        case live

        var setup: TestingSetup { self == .router ? .router : .live }
        var testDescription: String { rawValue }
    }

    /// Runs `body` against the application: Hummingbird's in-process router (default), or `.live`, a real HTTP
    /// server on a loopback port; returns what `body` returns.
    @discardableResult
    func test<Value>(
        _ mode: TestingSetup = .router, _ body: @Sendable (Client) async throws -> Value
    ) async throws -> Value {
        let app = try LedgerServerApp.build(
            configuration: configuration, ledger: temporary.ledger, keys: keys, metrics: metrics,
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        return try await app.test(mode) { client in try await body(Client(client: client)) }
    }

    /// Event ids in the ledger file, in position order, of every app: bare for `app`, `app/id` for any other
    /// namespace (`/id` for none), so a test sees both what was written and where.
    func storedIDs() throws -> [String] {
        var ids: [String] = []
        try ledger.store.forEachEvent(after: 0) { recorded in
            let (app, id) = Namespaced.split(recorded.id)
            ids.append(app == Self.app ? id : "\(app)/\(id)")
            return true
        }
        return ids
    }

    /// A client that speaks JSON with a key.
    struct Client: Sendable {
        let client: any TestClientProtocol

        struct Reply: Sendable {
            var status: Int
            var text: String
            var json: JSONValue?
            var headers: HTTPFields = [:]
            /// `error.field` and `error.code` of an error reply.
            var errorField: String? { json?["error"]?["field"]?.stringValue }
            var errorCode: String? { json?["error"]?["code"]?.stringValue }
            var errorMessage: String { json?["error"]?["message"]?.stringValue ?? "" }
        }

        func send(
            _ method: HTTPRequest.Method, _ uri: String, key: String?, body: String? = nil,
            contentType: String = "application/json", accept: String? = nil
        ) async throws -> Reply {
            var headers: HTTPFields = [:]
            if let key { headers[.authorization] = "Bearer \(key)" }
            if let accept { headers[.accept] = accept }
            if body != nil { headers[.contentType] = contentType }
            return try await client.execute(
                uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }
            ) { response in
                let text = String(buffer: response.body)
                return Reply(
                    status: response.status.code, text: text, json: try? JSONValue(json: Data(text.utf8)),
                    headers: response.headers)
            }
        }

        func get(_ uri: String, key: String?) async throws -> Reply {
            try await send(.get, uri, key: key)
        }

        func post(
            _ uri: String, key: String?, _ body: String, contentType: String = "application/json", accept: String? = nil
        ) async throws -> Reply {
            try await send(.post, uri, key: key, body: body, contentType: contentType, accept: accept)
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
