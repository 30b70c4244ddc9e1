import ActivityModel
import Foundation
import Ledger
import LedgerPostgres
import LedgerStore
import LedgerTesting
import Logging
import Testing

/// The ledger's own rules, written once and run on both backends (`Backend.all`): appends with expected versions
/// and re-sent ids, app namespaces, the all-or-nothing import, API keys, nightly runs recorded once, and the
/// projections equal to a rebuild. `PostgresEquivalenceTests` (LedgerTests) compares every query's bytes across the
/// two; `PostgresServersTests` (LedgerServerTests) runs three real servers on one database.
@Suite("Ledger conformance on every backend")
struct LedgerConformanceTests {
    static let rides = "com.example.rides"
    static let scores = "com.example.scores"

    @Test("expected versions, re-sent ids and conflicts through the ledger: the same outcomes and errors", arguments: Backend.all)
    func appendRules(backend: Backend) async throws {
        try await backend.withLedger { ledger in
            let request = try EventCodec.decode(Self.request("R1", id: "e1"))
            let update = try EventCodec.decode(Self.update("R1", id: "e2"))
            let first = try await ledger.append([request], expected: ["activity:R1": .noStream], app: Self.rides)
            #expect(first.map(\.position) == [1] && first.map(\.version) == [1] && first.map(\.duplicate) == [false])
            // A re-send is a duplicate with the original position; other content under the id is a conflict.
            let again = try await ledger.append([request], app: Self.rides)
            #expect(again.map(\.duplicate) == [true] && again.map(\.position) == [1])
            var changed = request
            changed.at = changed.at.adding(milliseconds: 1)
            let conflict = await #expect(throws: LedgerError.self) { try await ledger.append([changed], app: Self.rides) }
            #expect(conflict?.code == .conflict && conflict?.field == "events[0].id")
            // A wrong expected version writes nothing and names the stream and both versions.
            let stale = await #expect(throws: LedgerError.self) {
                try await ledger.append([update], expected: ["activity:R1": .exact(5)], app: Self.rides)
            }
            #expect(stale?.code == .conflict && stale?.stream == "activity:R1" && stale?.actualVersion == 1)
            #expect(try await ledger.lastPosition() == 1)
            let second = try await ledger.append([update], expected: ["activity:R1": .exact(1)], app: Self.rides)
            #expect(second.map(\.version) == [2])
            let state = try await ledger.state(activity: "R1", app: Self.rides)
            #expect(state.events == 2)
        }
    }

    @Test("apps are namespaces: the same ids and streams in two apps are two activities, invisible to each other", arguments: Backend.all)
    func namespaces(backend: Backend) async throws {
        try await backend.withLedger { ledger in
            let request = try EventCodec.decode(Self.request("R1", id: "e1"))
            _ = try await ledger.append([request], app: Self.rides)
            let other = try await ledger.append([request], app: Self.scores)
            #expect(other.map(\.duplicate) == [false] && other.map(\.position) == [2])
            let end = try EventCodec.decode(
                #"{"id":"x","stream":"activity:R1","type":"end","at":"2026-11-20T21:10:00Z","source":"server","data":{"dismissalPolicy":"immediate","timestamp":1795208800}}"#)
            _ = try await ledger.append([end], app: Self.scores)
            let t = Instant(milliseconds: 1_795_210_200_000)  // 2026-11-20T21:30:00Z
            #expect(try await ledger.state(activity: "R1", at: t, app: Self.rides).phase == .active)
            #expect(try await ledger.state(activity: "R1", at: t, app: Self.scores).phase != .active)
            await #expect(throws: LedgerError.self) { try await ledger.state(activity: "R1", app: "com.example.other") }
            let listed = try await ledger.activities(ActivityFilter(app: Self.rides, limit: 10))
            #expect(listed.activities.map(\.activity) == ["R1"])
            let feed = try await ledger.feed(after: 0, limit: 10, app: Self.rides)
            #expect(feed.events.map(\.position) == [1])
        }
    }

    @Test("an import is one transaction: a refused line names its number and writes nothing", arguments: Backend.all)
    func importAllOrNothing(backend: Backend) async throws {
        try await backend.withLedger { ledger in
            let directory = TemporaryDirectory(prefix: "conformance-import")
            let good = directory.file("good.jsonl")
            let lines: [String] = CorpusGenerator(seed: 3, activities: 6, eventsPerActivity: 12).lines().map { $0 }
            try lines.joined(separator: "\n").write(toFile: good, atomically: true, encoding: .utf8)
            let summary = try await ledger.importJSONLines(try JSONLinesReader(path: good), batchSize: 10)
            #expect(summary.appended == lines.count && summary.lastPosition == Int64(lines.count))
            let bad = directory.file("bad.jsonl")
            let more = [Self.request("NEW-1", id: "n1"), Self.request("NEW-2", id: "n2"), #"{"stream":"activity:X"}"#]
            try more.joined(separator: "\n").write(toFile: bad, atomically: true, encoding: .utf8)
            let refused = await #expect(throws: LedgerError.self) {
                try await ledger.importJSONLines(try JSONLinesReader(path: bad), batchSize: 1)
            }
            #expect(refused?.line == 3)
            #expect(try await ledger.lastPosition() == Int64(lines.count))
            // A re-import is all duplicates.
            let again = try await ledger.importJSONLines(try JSONLinesReader(path: good))
            #expect(again.appended == 0 && again.duplicates == lines.count)
        }
    }

    @Test("projections written with each append equal a rebuild from the log", arguments: Backend.all)
    func projectionsEqualRebuild(backend: Backend) async throws {
        try await backend.withLedger { ledger in
            var lines: [String] = CorpusGenerator(seed: 9, activities: 60, eventsPerActivity: 14).lines().map { $0 }
            lines += RandomWorkload(seed: 5, activities: 10, eventsPerActivity: 20).lines()
            var index = 0
            while index < lines.count {
                let size = min(lines.count - index, 1 + index % 37)
                _ = try await ledger.append(try lines[index..<index + size].map { try EventCodec.decode($0) })
                index += size
            }
            let inline = try await ledger.projectionDump()
            #expect(inline.count > 100)
            let summary = try await ledger.rebuild()
            #expect(summary.events == Int64(lines.count))
            #expect(try await ledger.projectionDump() == inline)
        }
    }

    @Test("API keys: created, authenticated by secret only, listed per app, revoked", arguments: Backend.all)
    func keys(backend: Backend) async throws {
        try await backend.withLedger { ledger in
            let keys = try APIKeyStore(ledger: ledger)
            let (secret, key) = try keys.create(app: Self.rides, scopes: [.ingest, .read])
            _ = try keys.create(app: Self.scores, scopes: [.admin])
            #expect(try keys.authenticate(secret)?.id == key.id)
            #expect(try keys.authenticate(secret + "x") == nil)
            #expect(try keys.list(app: Self.rides).map(\.scopes) == [[.ingest, .read]])
            #expect(try keys.list().count == 2)
            #expect(try keys.revoke(id: key.id))
            #expect(try keys.authenticate(secret) == nil)
            #expect(try keys.revoke(id: key.id) == false)
        }
    }

    @Test("a nightly run is recorded once: a re-run evaluates nothing and returns the recorded report", arguments: Backend.all)
    func nightlyOnce(backend: Backend) async throws {
        try await backend.withLedger { ledger in
            _ = try await ledger.append([try EventCodec.decode(Self.request("R1", id: "e1"))], app: Self.rides)
            let directory = TemporaryDirectory(prefix: "conformance-nightly")
            let truth = directory.file("truth.jsonl")
            try #"{"activity":"R1","state":{"eta":9}}"#.write(toFile: truth, atomically: true, encoding: .utf8)
            let at = Instant(milliseconds: 1_795_300_000_000)
            let first = try await ledger.nightly(truth: try JSONLinesReader(path: truth), runID: "n1", at: at, app: Self.rides)
            #expect(first.status == .recorded && first.recordedEvents > 0)
            let last = try await ledger.lastPosition()
            let again = try await ledger.nightly(truth: try JSONLinesReader(path: truth), runID: "n1", at: at, app: Self.rides)
            #expect(again.status == .alreadyRecorded && again.recordedEvents == 0)
            #expect(try await ledger.lastPosition() == last)
            #expect(try await ledger.nightlyReport(run: "n1", app: Self.scores) == nil)
        }
    }

    @Test("a NUL or U+0001 in an attributes type is refused at the door like in any name; a NUL in a query's names finds nothing, never a storage error", arguments: Backend.all)
    func nulBytes(backend: Backend) async throws {
        try await backend.withLedger { ledger in
            _ = try await ledger.append([try EventCodec.decode(Self.request("R1", id: "e1"))])
            let missing = await #expect(throws: LedgerError.self) { try await ledger.state(activity: "R\u{0}1") }
            #expect(missing?.code == .notFound)
            let noEvent = await #expect(throws: LedgerError.self) { try await ledger.event(id: "e\u{0}1") }
            #expect(noEvent?.code == .notFound)
            for filter in [
                ActivityFilter(installation: "I\u{0}1"), ActivityFilter(attributesType: "Ride\u{0}"),
                ActivityFilter(channel: "c\u{0}"), ActivityFilter(app: "com.example\u{0}"),
            ] {
                #expect(try await ledger.activities(filter).activities.isEmpty)
            }
            // Until session 26 attributes types were free text, stored with U+0000 as sent; the file's SQLite cut
            // such a column at the NUL, so the two backends listed different activities for one filter (found by
            // a probe). An attributes type is a name now: refused, naming its field, on both.
            for (activity, escape) in [("R2", #"\u0000"#), ("R3", #"\u0001"#)] {
                let line = Self.request(activity, id: "id-\(activity)")
                    .replacingOccurrences(of: "RideAttributes", with: "Ride\(escape)Attributes")
                let refused = await #expect(throws: LedgerError.self) { try await ledger.append([try EventCodec.decode(line)]) }
                #expect(refused?.field == "events[0].data.attributesType", "\(String(describing: refused))")
            }
            #expect(try await ledger.lastPosition() == 1)
            _ = try await ledger.activities(ActivityFilter(attributesType: "Ride\u{0}Attributes"))
        }
    }

    @Test("a ledger waiting for appends wakes for another handle's append on the same database, and times out without one", .enabled(if: TestDatabase.enabled))
    func waitForOtherAppends() async throws {
        try await Backend.postgres.withLedger { ledger, url in
            let other = try await Ledger.open(.postgres(url: url), logger: TestDatabase.quiet)
            do {
                let started = ContinuousClock.now
                await ledger.waitForAppend(timeout: .milliseconds(300))
                #expect(ContinuousClock.now - started >= .milliseconds(250))
                async let woke: Void = ledger.waitForAppend(timeout: .seconds(20))
                try await Task.sleep(for: .milliseconds(500))
                let appended = ContinuousClock.now
                _ = try await other.append([try EventCodec.decode(Self.request("R1", id: "e1"))])
                await woke
                #expect(ContinuousClock.now - appended < .seconds(5))
            } catch {
                await other.close()
                throw error
            }
            await other.close()
        }
    }

    /// Each append reads the projection rows it changes outside any transaction and writes them with its events
    /// only if no other append committed since: three handles (three servers' pools) appending batches of the same
    /// activities at once must leave the projections a rebuild of the log gives.
    @Test("three handles appending the same activities at once leave projections equal to a rebuild", .enabled(if: TestDatabase.enabled))
    func concurrentProjectionsEqualRebuild() async throws {
        try await Backend.postgres.withLedger { ledger, url in
            var lines: [String] = CorpusGenerator(seed: 11, activities: 40, eventsPerActivity: 15).lines().map { $0 }
            lines += RandomWorkload(seed: 7, activities: 12, eventsPerActivity: 20).lines()
            let batches = stride(from: 0, to: lines.count, by: 9).map { start in
                Array(lines[start..<min(start + 9, lines.count)])
            }
            let others = [
                try await Ledger.open(.postgres(url: url), logger: TestDatabase.quiet),
                try await Ledger.open(.postgres(url: url), logger: TestDatabase.quiet),
            ]
            let handles = [ledger] + others
            do {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (number, handle) in handles.enumerated() {
                        group.addTask {
                            for batch in batches.indices where batch % handles.count == number {
                                _ = try await handle.append(try batches[batch].map { try EventCodec.decode($0) })
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            } catch {
                for other in others { await other.close() }
                throw error
            }
            for other in others { await other.close() }
            #expect(try await ledger.lastPosition() == Int64(lines.count))
            let inline = try await ledger.projectionDump()
            #expect(inline.count > 60)
            _ = try await ledger.rebuild()
            #expect(try await ledger.projectionDump() == inline)
            #expect(try await ledger.verify().ok)
        }
    }

    static func request(_ activity: String, id: String) -> String {
        #"{"id":"\#(id)","stream":"activity:\#(activity)","type":"request","at":"2026-11-20T21:00:00Z","data":{"attributesType":"RideAttributes","attributes":{"ride":"\#(activity)"},"content":{"state":{"eta":5}},"pushType":"token","installation":"I1"}}"#
    }

    static func update(_ activity: String, id: String) -> String {
        #"{"id":"\#(id)","stream":"activity:\#(activity)","type":"update","at":"2026-11-20T21:05:00Z","source":"server","data":{"content":{"state":{"eta":3}},"timestamp":1795208700}}"#
    }
}

extension Backend {
    /// A new, empty ledger of this backend for `body`, closed and removed afterwards.
    func withLedger(_ body: (Ledger) async throws -> Void) async throws {
        try await withLedger { ledger, _ in try await body(ledger) }
    }

    /// The same, with where it lives (a PostgreSQL URL, or the file's path).
    func withLedger(_ body: (Ledger, String) async throws -> Void) async throws {
        switch self {
        case .sqlite:
            let directory = TemporaryDirectory(prefix: "ledger-conformance")
            let path = directory.file("ledger.sqlite")
            var configuration = LedgerConfiguration()
            configuration.store.durability = .off
            let ledger = try await Ledger.open(.sqlite(path: path), configuration: configuration, logger: quiet)
            try await body(ledger, path)
        case .postgres:
            let database = try await TestDatabase.create()
            let ledger: Ledger
            do {
                ledger = try await Ledger.open(.postgres(url: database.url), logger: quiet)
            } catch {
                try? await database.drop()
                throw error
            }
            do {
                try await body(ledger, database.url)
            } catch {
                await ledger.close()
                try? await database.drop()
                throw error
            }
            await ledger.close()
            try await database.drop()
        }
    }
}
