import Foundation
import HTTPTypes
import HummingbirdTesting
import Ledger
import LedgerServer
import LedgerStore
import LedgerTesting
import Logging
import NIOCore
import PostgresNIO
import Testing

/// SPEC §6 "Scale-out": several `serve` processes on one PostgreSQL database are one ledger. Three real servers
/// (the real binary) take appends at once, on their own streams and on shared ones; one is killed with -9 in the
/// middle. Afterwards: positions gapless, the chain valid, every acknowledged event stored once at the position
/// it was acknowledged with, the projections equal to a rebuild, and each server answers about the others'
/// activities; a feed long-poll on one server wakes for an append through another.
@Suite("Several servers on one PostgreSQL database (real binary)", .enabled(if: TestDatabase.enabled))
struct PostgresServersTests {
    static let app = "com.example.shared"

    @Test("three servers under append load, one killed with -9: one gapless, valid ledger holding every acknowledged event; feeds wake across servers")
    func threeServersOneLedger() async throws {
        let binary = try #require(ServeProcess.binary(), "activity-ledger not found next to the test bundle")
        let database = try await TestDatabase.create()
        let directory = TemporaryDirectory(prefix: "postgres-servers")
        var servers: [ServeProcess] = []
        do {
            let key = try await offThePool {
                try ServeProcess.run(binary, ["keys", "create", "--app", Self.app, "--scope", "ingest,read", "--db", database.url])
            }
            for name in ["a", "b", "c"] {
                servers.append(try await ServeProcess.start(
                    binary, db: database.url, directory: directory, name: "serve-\(name)",
                    log: directory.file("serve-\(name).log")))
            }

            let ports = servers.map(\.port)
            // A long-poll on c wakes for an append through a: it answers with the event long before its wait ends.
            let before = try await Self.lastPosition(port: servers[2].port, key: key)
            let started = ContinuousClock.now
            async let woken = Self.get(port: ports[2], key: key, path: "/v1/feed?after=\(before)&wait=20")
            try await Task.sleep(for: .milliseconds(300))
            let marker = UUID().uuidString.lowercased()
            let sent = try await Self.post(
                port: servers[0].port, key: key, body: #"{"events":[\#(Sample.request("WAKE-1", id: marker))]}"#)
            #expect(sent.status == .ok)
            let feed = try await woken
            let waited = ContinuousClock.now - started
            #expect(feed.contains(marker), "c's feed did not return a's append: \(feed.prefix(300))")
            #expect(waited < .seconds(10), "c's long-poll woke only after \(waited)")

            // Load: two appenders per server, own streams and shared ones; the victim (b) is killed mid-load.
            let log = SoakLog()
            let deadline = ContinuousClock.now + .seconds(10)
            let appenders = (0..<6).map { worker in
                Task {
                    await Self.append(
                        port: ports[worker % 3], key: key, worker: worker, until: deadline, log: log)
                }
            }
            try await Task.sleep(for: .seconds(4))
            let ackedBeforeKill = await log.acknowledged.count
            servers[1].killNine()
            for appender in appenders { await appender.value }

            // Projections are shared: every server answers about an activity another one recorded.
            for server in [servers[0], servers[2]] {
                let state = try await Self.get(port: server.port, key: key, path: "/v1/activities/WAKE-1/state")
                #expect(state.contains("\"phase\""), "no state of WAKE-1 from port \(server.port): \(state.prefix(200))")
            }
            let survivors = [servers[0], servers[2]]
            let stops = try await offThePool { survivors.map { $0.terminate(within: .seconds(30)) } }
            #expect(stops.allSatisfy { $0?.status == 0 }, "a server did not stop cleanly: \(stops)")

            let acked = await log.acknowledged
            let failures = await log.failures
            #expect(ackedBeforeKill >= 30, "too few appends before the kill (\(ackedBeforeKill)) to test anything")
            #expect(acked.count >= 100, "too few acknowledged appends (\(acked.count))")
            // The appenders of the killed server fail (transport errors); the others must not.
            let foreign = failures.filter { !$0.contains("port \(servers[1].port)") }
            #expect(foreign.isEmpty, "appends to the surviving servers failed: \(foreign.prefix(3))")

            let ledger = try await Ledger.open(.postgres(url: database.url), logger: TestDatabase.quiet)
            do {
                let verify = try await ledger.verify()
                #expect(verify.ok, "verify: \(verify.reason ?? "")")
                let last = try await ledger.lastPosition()
                var positions: [Int64] = []
                var after: Int64 = 0
                while true {
                    let page = try await ledger.feed(after: after, limit: 1000, app: Self.app)
                    positions += page.events.map(\.position)
                    guard page.lastPosition > after else { break }
                    after = page.lastPosition
                }
                #expect(positions == Array(1...last), "positions are not gapless 1…\(last)")
                let missing = await missingAcknowledged(acked, in: ledger, app: Self.app)
                #expect(missing.isEmpty, "acknowledged events missing: \(missing.count), e.g. \(missing.prefix(3))")
                let inline = try await ledger.projectionDump()
                _ = try await ledger.rebuild()
                #expect(try await ledger.projectionDump() == inline, "the projections differ from a rebuild")
            } catch {
                await ledger.close()
                throw error
            }
            await ledger.close()
        } catch {
            for server in servers where server.process.isRunning { server.killNine() }
            try? await database.drop()
            throw error
        }
        try await database.drop()
    }

    /// Appends batches (a request and an update of a new activity, plus an update of a stream all workers share)
    /// until `deadline`, logging what was acknowledged and what failed (naming the port).
    static func append(port: Int, key: String, worker: Int, until deadline: ContinuousClock.Instant, log: SoakLog) async {
        var round = 0
        while ContinuousClock.now < deadline {
            round += 1
            let activity = "W\(worker)-\(round)"
            let ids = (0..<3).map { _ in UUID().uuidString.lowercased() }
            let body = #"{"events":[\#(Sample.request(activity, id: ids[0])),\#(Sample.update(activity, id: ids[1])),\#(Sample.update("SHARED-\(round % 4)", id: ids[2]))]}"#
            do {
                let (status, text) = try await Self.send(port: port, key: key, path: "/v1/batches", body: body)
                guard status == .ok, let json = try? JSONValue(json: Data(text.utf8)),
                    let results = json["results"]?.arrayValue, results.count == 3
                else {
                    await log.fail("port \(port): \(status.code) \(text.prefix(200))")
                    continue
                }
                var landed: [String: Int64] = [:]
                for (id, result) in zip(ids, results) {
                    if let position = result["position"]?.intValue { landed[id] = Int64(position) }
                }
                await log.add(landed)
            } catch {
                await log.fail("port \(port): transport: \(error)")
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// Found by a probe: after a database restart (or `pg_terminate_backend`) the key check's statement on its dead
    /// connection was never answered; it blocked a thread of Swift's cooperative pool, the next one blocked behind
    /// it, and the whole server — `/health` and SIGTERM included — hung for good.
    @Test("a server whose database sessions are terminated answers again: keys, reads, appends, health")
    func sessionsTerminated() async throws {
        let binary = try #require(ServeProcess.binary(), "activity-ledger not found next to the test bundle")
        let database = try await TestDatabase.create()
        let directory = TemporaryDirectory(prefix: "postgres-terminated")
        let key = try await offThePool {
            try ServeProcess.run(binary, ["keys", "create", "--app", Self.app, "--scope", "ingest,read", "--db", database.url])
        }
        let server = try await ServeProcess.start(
            binary, db: database.url, directory: directory, name: "serve", log: directory.file("serve.log"))
        defer { server.stop() }
        let batch = #"{"events":[\#(Self.request("T1"))]}"#
        #expect(try await Self.post(port: server.port, key: key, body: batch).status == .ok)
        try await TestDatabase.admin(database.url) { client in
            _ = try await client.query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).collect()
        }
        try await Task.sleep(for: .seconds(1))  // past the key cache's half second: the key is read again
        let started = ContinuousClock.now
        for _ in 0..<3 {
            let state = try await Self.send(port: server.port, key: key, path: "/v1/activities/T1/state", body: nil)
            #expect(state.0 == .ok, "\(state.1)")
        }
        #expect(try await Self.post(port: server.port, key: key, body: #"{"events":[\#(Self.request("T2"))]}"#).status == .ok)
        #expect(ContinuousClock.now - started < .seconds(30))
        try await database.drop()
    }

    static func request(_ activity: String) -> String {
        #"{"stream":"activity:\#(activity)","type":"request","at":"2026-11-20T21:00:00Z","data":{"attributesType":"A","attributes":{},"content":{"state":{"eta":1}}}}"#
    }

    static func lastPosition(port: Int, key: String) async throws -> Int64 {
        let digest = try JSONValue(json: Data(try await get(port: port, key: key, path: "/v1/digest").utf8))
        return Int64(digest["position"]?.intValue ?? 0)
    }

    static func get(port: Int, key: String, path: String) async throws -> String {
        try await send(port: port, key: key, path: path, body: nil).1
    }

    static func post(port: Int, key: String, body: String) async throws -> (status: HTTPResponse.Status, text: String) {
        try await send(port: port, key: key, path: "/v1/batches", body: body)
    }

    static func send(port: Int, key: String, path: String, body: String?) async throws
        -> (HTTPResponse.Status, String)
    {
        let client = TestClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(60)))
        client.connect()
        defer { Task { try? await client.shutdown() } }
        var headers: HTTPFields = [.authorization: "Bearer \(key)"]
        let response: TestClient.Response
        if let body {
            headers[.contentType] = "application/json"
            response = try await client.post(path, headers: headers, body: ByteBuffer(string: body))
        } else {
            response = try await client.get(path, headers: headers)
        }
        return (response.status, String(buffer: response.body ?? ByteBuffer()))
    }
}
