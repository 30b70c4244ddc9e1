import Foundation
import HummingbirdTesting
import LedgerServer
import LedgerTesting
import Logging
import Testing

/// Runs Tools/fuzz-api.sh (schemathesis with every check) against the live server over a real, seeded ledger file.
/// Opt-in because it needs schemathesis and takes a while: `LEDGER_FUZZ=1 swift test --filter SchemathesisTests`
/// (`make fuzz-api` fuzzes the built `serve` binary the same way).
@Suite("Schemathesis against the live server")
struct SchemathesisTests {
    @Test(
        "schemathesis with every check finds no server error, no response outside the schema and no input the schema and server judge differently",
        .enabled(if: ProcessInfo.processInfo.environment["LEDGER_FUZZ"] != nil)
    )
    func fuzz() async throws {
        var service = try TestService(maxBodyBytes: 1 << 20)
        service.configuration.maxFeedWaitSeconds = 1
        try await service.temporary.append(
            [Sample.request("RIDE-1", id: "seed-1"), Sample.update("RIDE-1", id: "seed-2")].joined(separator: "\n"),
            app: TestService.app)
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let app = try LedgerServerApp.build(
            configuration: service.configuration, ledger: service.ledger, keys: service.keys,
            metrics: ServerMetrics(), logger: Logger(label: "fuzz")
        )
        let adminKey = service.admin
        try await app.test(.live) { client in
            let port = try #require(client.port)
            var environment = ProcessInfo.processInfo.environment
            environment["FUZZ_URL"] = "http://127.0.0.1:\(port)"
            environment["FUZZ_KEY"] = adminKey
            let process = try ChildProcess(
                root.appendingPathComponent("Tools/fuzz-api.sh"), [], environment: environment,
                stdout: .inherit, stderr: .inherit)
            while process.isRunning { try await Task.sleep(for: .milliseconds(200)) }
            #expect(process.terminationStatus == 0)
        }
    }
}
