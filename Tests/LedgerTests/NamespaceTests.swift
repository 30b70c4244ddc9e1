@testable import ActivityModel
import Foundation
import GRDB
@testable import Ledger
import LedgerStore
import LedgerTesting
import Logging
import Testing

/// SPEC §2 "Apps are namespaces", at the ledger's API (the hostile-tenant suite in LedgerServerTests tries the
/// same over HTTP).
@Suite("Apps are namespaces")
struct NamespaceTests {
    static let rideA = """
        {"id":"e1","stream":"activity:LIVE-A1","type":"request","at":"2026-11-20T21:00:00Z","data":{"attributesType":"RideAttributes","attributes":{"ride":"A1"},"content":{"state":{"driver":"ALICE"}},"pushType":"token","installation":"I1"}}
        {"id":"e2","stream":"activity:LIVE-A1","type":"token","at":"2026-11-20T21:00:01Z","source":"app","data":{"token":"aa11"}}
        """
    static let rideB = """
        {"id":"e1","stream":"activity:LIVE-A1","type":"request","at":"2026-11-20T21:00:00Z","data":{"attributesType":"RideAttributes","attributes":{"ride":"B1"},"content":{"state":{"driver":"BOB"}},"pushType":"token","installation":"I1"}}
        {"id":"e2","stream":"activity:LIVE-A1","type":"token","at":"2026-11-20T21:00:01Z","source":"app","data":{"token":"aa11"}}
        """
    static let later = Instant(seconds: 1_795_208_400 + 600)

    @Test("two apps' equal stream names and ids are two streams and two events; the app-less namespace sees neither")
    func equalNamesDoNotMeet() async throws {
        let temp = try TemporaryLedger()
        let a = try await temp.append(Self.rideA, app: "com.a")
        let b = try await temp.append(Self.rideB, app: "com.b")
        #expect(a.map(\.duplicate) == [false, false] && b.map(\.duplicate) == [false, false])
        #expect(b.map(\.position) == [3, 4] && b.map(\.version) == [1, 2])
        #expect(try await temp.ledger.state(activity: "LIVE-A1", at: Self.later, app: "com.a").displayed?.state == ["driver": "ALICE"])
        #expect(try await temp.ledger.state(activity: "LIVE-A1", at: Self.later, app: "com.b").displayed?.state == ["driver": "BOB"])
        await #expect(throws: LedgerError.self) { try await temp.ledger.state(activity: "LIVE-A1", at: Self.later) }
        #expect(try await temp.ledger.event(id: "e1", app: "com.b").position == 3)
        await #expect(throws: LedgerError.self) { try await temp.ledger.event(id: "e1") }
        // Lists, tokens and installations stay in their namespace.
        let listA = try await temp.ledger.activities(ActivityFilter(token: "aa11", app: "com.a", at: Self.later))
        #expect(listA.activities.map(\.activity) == ["LIVE-A1"] && listA.activities[0].attributes == ["ride": "A1"])
        #expect(try await temp.ledger.activities(ActivityFilter(installation: "I1", at: Self.later)).activities.isEmpty)
        #expect(try await temp.ledger.feed(after: 0, limit: 100, app: "com.b").events.map(\.position) == [3, 4])
        #expect(try await temp.ledger.store.verify().ok)
    }

    @Test("a channel reaches only its own app's activities")
    func channelsStayInTheirApp() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(Self.rideA, app: "com.a")
        let before = try await temp.ledger.state(activity: "LIVE-A1", at: Self.later, app: "com.a")
        let hostile = """
            {"id":"s1","stream":"channel:B-CHAN","type":"subscribe","at":"2026-11-20T21:01:00Z","data":{"activity":"LIVE-A1"}}
            {"id":"x1","stream":"channel:B-CHAN","type":"end","at":"2026-11-20T21:02:00Z","data":{"content":{"state":{"driver":"MALLORY"}},"timestamp":1795208520,"dismissalPolicy":"immediate"}}
            """
        try await temp.append(hostile, app: "com.b")
        let after = try await temp.ledger.state(activity: "LIVE-A1", at: Self.later, app: "com.a")
        #expect(after == before)
        #expect(try await temp.ledger.audit(activity: "LIVE-A1", at: Self.later, app: "com.a").deliveries.isEmpty)
        #expect(try await temp.ledger.audit(update: "x1", at: Self.later, app: "com.b").deliveries.isEmpty)
        #expect(try await temp.ledger.activities(ActivityFilter(channel: "B-CHAN", app: "com.a", at: Self.later)).activities.isEmpty)
        #expect(try await temp.ledger.activities(ActivityFilter(channel: "B-CHAN", app: "com.b", at: Self.later)).activities.isEmpty)
    }

    @Test("NUL and other control characters in ids and stream names are refused, never stored cut")
    func controlCharactersRefused() async throws {
        let temp = try TemporaryLedger()
        for line in [
            #"{"id":"abc\u0000one","stream":"activity:R1","type":"dismiss","at":1,"data":{"by":"user"}}"#,
            #"{"stream":"activity:R\u0000X","type":"dismiss","at":1,"data":{"by":"user"}}"#,
            #"{"stream":"activity:R\nX","type":"dismiss","at":1,"data":{"by":"user"}}"#,
            #"{"stream":"channel:C","type":"subscribe","at":1,"data":{"activity":"A\u001fB"}}"#,
            #"{"stream":"activity:R1","type":"push","at":1,"data":{"refersTo":"u1","status":410,"token":"ab\u0000cd"}}"#,
        ] {
            let error = await #expect(throws: (any Error).self) { try await temp.append(line) }
            #expect("\(error!)".contains("control character"), "\(line): \(error!)")
        }
        #expect(try temp.ledger.store.lastPosition() == 0)
        // U+2028 and other printable oddities are names like any other, stored exactly.
        try await temp.append(#"{"id":"a\u2028b","stream":"activity:R\u2028","type":"dismiss","at":1,"data":{"by":"user"}}"#)
        #expect(try await temp.ledger.event(id: "a\u{2028}b").event.stream.id == "R\u{2028}")
        #expect(try await temp.ledger.store.verify().ok)
    }

    @Test("a file written before namespaces migrates: owned streams move into their app, a digest taken before still verifies")
    func migrationKeepsTheChain() async throws {
        let directory = TemporaryDirectory()
        let path = directory.file("old.sqlite")
        let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        // The old layout: bare names in the log, ownership in stream_owners, migrations up to 201 but not 105.
        do {
            let store = try EventStore(path: path, logger: logger)
            var events: [NewEvent] = []
            for line in (Self.rideA + "\n" + #"{"id":"10000000-0000-4000-8000-00000000000a","stream":"activity:FREE","type":"dismiss","at":5,"data":{"by":"user"}}"#)
                .split(separator: "\n")
            {
                let event = try EventCodec.decode(String(line))
                events.append(NewEvent(
                    id: event.id!, stream: event.stream.description, type: event.type.rawValue,
                    at: event.at.milliseconds, payload: EventCodec.encodePayload(event)))
            }
            _ = try await store.append(AppendBatch(events: events))
            var migrator = DatabaseMigrator()
            for migration in LedgerSchema.migrations where migration.name != "105_app_namespaces" {
                migrator.registerMigration("ledger." + migration.name) { db in try db.execute(sql: migration.sql) }
            }
            try migrator.migrate(store.pool)
            try await store.pool.write { db in
                try db.execute(sql: "INSERT INTO stream_owners (stream, app) VALUES ('activity:LIVE-A1', 'com.a')")
            }
        }
        let digest = try EventStore(path: path, configuration: Self.readOnly, logger: logger).digest()
        #expect(digest.position == 3)

        let ledger = try Ledger(path: path, logger: logger)
        #expect(try ledger.store.verify(upTo: digest).ok)
        #expect(try ledger.store.verify().ok)
        #expect(try await ledger.state(activity: "LIVE-A1", at: Self.later, app: "com.a").token == "aa11")
        await #expect(throws: LedgerError.self) { try await ledger.state(activity: "LIVE-A1", at: Self.later) }
        #expect(try await ledger.event(id: "e1", app: "com.a").position == 1)
        #expect(try await ledger.event(id: "10000000-0000-4000-8000-00000000000a").position == 3)
        // New appends in both namespaces chain on, and the whole file still verifies.
        _ = try await ledger.append([try EventCodec.decode(#"{"id":"e1","stream":"activity:LIVE-A1","type":"dismiss","at":6,"data":{"by":"user"}}"#)], app: "com.b")
        _ = try await ledger.append([try EventCodec.decode(#"{"id":"e9","stream":"activity:LIVE-A1","type":"dismiss","at":7,"data":{"by":"user"}}"#)], app: "com.a")
        #expect(try ledger.store.verify().ok)
        #expect(try ledger.store.verify(upTo: digest).ok)
        // Sealed, the rows hashed over bare names still verify (the segment keeps their qualified names).
        let unsealed = try ledger.store.digest()
        #expect(try ledger.store.seal().events == 5)
        #expect(try ledger.store.verify().ok && ledger.store.verify(upTo: digest).ok)
        #expect(try ledger.store.digest() == unsealed)
        #expect(try await ledger.event(id: "e1", app: "com.a").position == 1)
        #expect(try await ledger.event(id: "e1", app: "com.b").position == 4)
    }

    static var readOnly: StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.readOnly = true
        return configuration
    }
}
