import Foundation
import GRDB
import HTTPTypes
import HummingbirdTesting
import Ledger
import LedgerServer
import LedgerStore
import LedgerTesting
import Logging
import NIOCore
import Testing

@Suite("kill -9 of the real server under load")
struct ServeCrashTests {
    static let projections = ["activities", "tokens", "channel_members", "start_tokens"]

    @Test("every acknowledged event survives, verify passes and the projections equal a rebuild")
    func killNineUnderLoad() async throws {
        let keyed = try await ServeProcess.keyedLedger(prefix: "serve-crash", app: "com.example.crash")
        let (binary, directory, db, key) = (keyed.binary, keyed.directory, keyed.db, keyed.key)
        let server = try await ServeProcess.start(binary, db: db, directory: directory)
        let acknowledged = Acknowledged()
        let workers = (0..<6).map { worker in
            Task { await Self.load(port: server.port, key: key, worker: worker, into: acknowledged) }
        }
        // Let the workers append until the server has acknowledged enough: 150, or after 15 s more than 20 (a
        // loaded machine is slow: 18 in 15 s with every suite running at once), at most 120 s; then for a random
        // while more, and kill the server without warning.
        let started = ContinuousClock.now
        while true {
            let count = await acknowledged.events.count
            let waited = ContinuousClock.now - started
            if count >= 150 || (count > 20 && waited > .seconds(15)) || waited > .seconds(120) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .milliseconds(Int.random(in: 0...700)))
        try await offThePool { server.killNine() }
        for worker in workers { await worker.value }

        let acked = await acknowledged.events
        #expect(acked.count > 20, "the server acknowledged too little to test anything")
        let ledger = try Ledger(path: db, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        let missing = await missingAcknowledged(acked, in: ledger, app: "com.example.crash")
        #expect(missing.isEmpty, "acknowledged events missing or moved: \(missing.prefix(5))")
        let report = try await offThePool { try ledger.store.verify() }
        #expect(report.ok, "\(report.reason ?? "")")
        #expect(report.checked >= acked.values.max() ?? 0)
        let before = try await offThePool { try Self.projectionRows(ledger) }
        _ = try await ledger.rebuild()
        let after = try await offThePool { try Self.projectionRows(ledger) }
        for table in Self.projections {
            #expect(before[table] == after[table], "\(table) differs from a rebuild")
        }
        #expect(before["activities"]?.isEmpty == false)
    }

    /// Appends batches (a request and two updates of a new activity) until the server goes away.
    static func load(port: Int, key: String, worker: Int, into acknowledged: Acknowledged) async {
        let client = TestClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(10)))
        client.connect()
        defer { Task { try? await client.shutdown() } }
        let headers: HTTPFields = [.authorization: "Bearer \(key)", .contentType: "application/json"]
        for round in 0..<100_000 {
            let activity = "W\(worker)-\(round)"
            let ids = (0..<3).map { _ in UUID().uuidString.lowercased() }
            let body = #"""
                {"events":[\#(Sample.request(activity, id: ids[0])),\#(Sample.update(activity, id: ids[1])),\#(Sample.update(activity, id: ids[2], timestamp: 1_763_672_500))]}
                """#
            guard let response = try? await client.post("/v1/batches", headers: headers, body: ByteBuffer(string: body)),
                response.status == .ok,
                let text = response.body.map({ String(buffer: $0) }),
                let json = try? JSONValue(json: Data(text.utf8)),
                let results = json["results"]?.arrayValue, results.count == 3
            else { return }
            var landed: [String: Int64] = [:]
            for (id, result) in zip(ids, results) {
                guard let position = result["position"]?.intValue else { return }
                landed[id] = Int64(position)
            }
            await acknowledged.add(landed)
        }
    }

    static func projectionRows(_ ledger: Ledger) throws -> [String: [String]] {
        try ledger.pool.read { db in
            var rows: [String: [String]] = [:]
            for table in projections {
                rows[table] = try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY 1, 2").map(\.description)
            }
            return rows
        }
    }
}

/// Event id → position of every event the server acknowledged.
actor Acknowledged {
    private(set) var events: [String: Int64] = [:]

    func add(_ landed: [String: Int64]) {
        events.merge(landed) { first, _ in first }
    }
}
