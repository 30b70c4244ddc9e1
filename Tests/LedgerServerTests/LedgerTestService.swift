import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import LedgerServer
import LedgerStore
import LedgerTesting
import Logging

/// One server under test over the REAL ledger: a `TemporaryLedger` file served as it is, with the API
/// key table in the same file, keys of every scope for `TestService.app` and an admin key of another app.
struct LedgerTestService {
    static let otherApp = "com.example.other"

    let temporary: TemporaryLedger
    let keys: APIKeyStore
    let admin: String
    let ingest: String
    let read: String
    let otherAdmin: String
    var configuration: LedgerServerConfiguration

    var ledger: Ledger { temporary.ledger }

    init(maxBodyBytes: Int = 64 * 1024) throws {
        temporary = try TemporaryLedger()
        keys = try APIKeyStore(writer: temporary.ledger.pool)
        admin = try keys.create(app: TestService.app, scopes: [.admin]).secret
        ingest = try keys.create(app: TestService.app, scopes: [.ingest]).secret
        read = try keys.create(app: TestService.app, scopes: [.read]).secret
        otherAdmin = try keys.create(app: Self.otherApp, scopes: [.admin]).secret
        configuration = LedgerServerConfiguration(
            port: 0, maxBodyBytes: maxBodyBytes, maxFeedWaitSeconds: 5, feedPollInterval: .milliseconds(20)
        )
    }

    /// Runs `body` against the application: Hummingbird's in-process router (default), or `.live`, a real HTTP
    /// server on a loopback port.
    func test(
        _ mode: TestingSetup = .router, _ body: @Sendable (TestService.Client) async throws -> Void
    ) async throws {
        let app = try LedgerServerApp.build(
            configuration: configuration, ledger: temporary.ledger, keys: keys, metrics: ServerMetrics(),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        try await app.test(mode) { client in try await body(TestService.Client(client: client)) }
    }

    /// Event ids stored in the ledger file, in position order, of every app (`app/id` for an app other than
    /// `TestService.app`, so a test sees what another app managed to write).
    func storedIDs() throws -> [String] {
        var ids: [String] = []
        try ledger.store.forEachEvent(after: 0) { recorded in
            let (app, id) = Namespaced.split(recorded.id)
            ids.append(app == TestService.app || app.isEmpty ? id : "\(app)/\(id)")
            return true
        }
        return ids
    }
}
