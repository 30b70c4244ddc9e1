import Foundation
import HummingbirdTesting
import LedgerServer
import Logging
import Testing

/// Runs Tools/fuzz-api.sh against the live server over the in-memory ledger double,
/// so the contract can be fuzzed before the real ledger is wired into `serve`. Opt-in because it needs
/// schemathesis and takes minutes: `LEDGER_FUZZ=1 swift test --filter SchemathesisTests`.
@Suite("Schemathesis against the live server")
struct SchemathesisTests {
    @Test(
        "schemathesis finds no server error and no response outside the schema",
        .enabled(if: ProcessInfo.processInfo.environment["LEDGER_FUZZ"] != nil)
    )
    func fuzz() async throws {
        var service = try TestService(maxBodyBytes: 1 << 20)
        service.configuration.maxFeedWaitSeconds = 1
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let app = try LedgerServerApp.build(
            configuration: service.configuration, backend: service.backend, keys: service.keys,
            metrics: service.metrics, logger: Logger(label: "fuzz")
        )
        let adminKey = service.admin
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let process = Process()
            process.executableURL = root.appendingPathComponent("Tools/fuzz-api.sh")
            var environment = ProcessInfo.processInfo.environment
            environment["FUZZ_URL"] = "http://127.0.0.1:\(port)"
            environment["FUZZ_KEY"] = adminKey
            process.environment = environment
            try process.run()
            while process.isRunning { try await Task.sleep(for: .milliseconds(200)) }
            #expect(process.terminationStatus == 0)
        }
    }
}
