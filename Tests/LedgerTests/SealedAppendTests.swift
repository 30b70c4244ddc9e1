import ActivityModel
import Foundation
import GRDB
import Ledger
import LedgerStore
import LedgerTesting
import Logging
import Testing

/// Appends to a file whose older events are sealed: ids, versions and positions behave as if every event were
/// still a row (SPEC §6: re-sent ids are no-ops, expected versions hold, positions stay gapless).
@Suite("Appends after sealing")
struct SealedAppendTests {
    typealias F = ReconcileFixtures

    /// R1 and R2 in the app-less namespace, R1 again (same ids) in com.a; segments of 3 events.
    static let initial = F.lines(
        F.request("R1"), F.token("R1", at: 1, token: "aa11"),
        F.update("R1", at: 2, state: #"{"eta":4}"#, eventID: "u1"),
        F.request("R2"),
        F.update("R1", at: 3, state: #"{"eta":3}"#, eventID: "u2"),
        F.update("R2", at: 4, state: #"{"eta":9}"#, eventID: "v1"),
        F.update("R2", at: 5, state: #"{"eta":8}"#, eventID: "v2"))
    static let appA = "com.a"

    static func open(_ path: String) throws -> Ledger {
        var configuration = LedgerConfiguration()
        configuration.store.durability = .off
        configuration.store.segmentEvents = 3
        return try Ledger(path: path, configuration: configuration, logger: Logger(label: "test"))
    }

    static func events(_ lines: String) throws -> [LedgerEvent] {
        try lines.split(separator: "\n").map { try EventCodec.decode(String($0)) }
    }

    /// Every event in position order as the store scans it.
    static func scan(_ ledger: Ledger) throws -> [RecordedEvent] {
        var all: [RecordedEvent] = []
        try ledger.store.forEachEvent(after: 0) { all.append($0); return true }
        return all
    }

    @Test("re-sent ids, expected versions, positions, lookups by id and stream reads across sealed events and new rows")
    func appendsAfterSealing() async throws {
        let directory = TemporaryDirectory(prefix: "sealed-append")
        let ledger = try Self.open(directory.file("ledger.sqlite"))
        let first = try await ledger.append(Self.events(Self.initial))
        let inA = try await ledger.append(Self.events(F.lines(F.request("R1"), F.update("R1", at: 2, state: #"{"eta":1}"#, eventID: "u1"))), app: Self.appA)
        #expect(first.map(\.position) == Array(1...7) && inA.map(\.position) == [8, 9])
        let before = try Self.scan(ledger)
        let byID = try await ledger.event(id: "u1")
        let u1InA = try await ledger.event(id: "u1", app: Self.appA)

        let report = try await ledger.seal()
        #expect(report.events == 9 && report.segments == 3 && report.sealedThrough == 9)
        #expect(try ledger.store.stats().unsealedEvents == 0)
        #expect(try Self.scan(ledger) == before)
        #expect(try await ledger.event(id: "u1") == byID)
        #expect(try await ledger.event(id: "u1", app: Self.appA) == u1InA)

        // The same event again: a duplicate at its original position and version, nothing written.
        let u1 = try Self.events(F.update("R1", at: 2, state: #"{"eta":4}"#, eventID: "u1"))
        let again = try await ledger.append(u1)
        #expect(again.map(\.duplicate) == [true] && again.map(\.position) == [3] && again.map(\.version) == [3])
        #expect(try await ledger.lastPosition() == 9)
        // In another app the id is another event: com.a's u1 is a duplicate there (of position 9), com.b's is new.
        let inOtherApp = try await ledger.append(
            Self.events(F.update("R1", at: 2, state: #"{"eta":1}"#, eventID: "u1")), app: Self.appA)
        #expect(inOtherApp.map(\.duplicate) == [true] && inOtherApp.map(\.position) == [9])
        // The same id with other content: refused, naming the position it is stored at.
        let conflict = await #expect(throws: LedgerError.self) {
            try await ledger.append(Self.events(F.update("R1", at: 2, state: #"{"eta":5}"#, eventID: "u1")))
        }
        #expect(conflict?.code == .conflict)
        #expect(conflict?.message.contains("position 3") == true, "\(conflict?.message ?? "")")
        #expect(try await ledger.lastPosition() == 9)

        // Expected versions on R1, whose 4 events are all sealed: the wrong one conflicts naming the actual.
        let next = try Self.events(F.update("R1", at: 6, state: #"{"eta":2}"#, eventID: "u3"))
        for wrong in [ExpectedVersion.exact(3), .noStream, .exact(5)] {
            let refused = await #expect(throws: LedgerError.self) {
                try await ledger.append(next, expected: ["activity:R1": wrong])
            }
            #expect(refused?.code == .conflict && refused?.actualVersion == 4, "\(wrong): \(refused?.message ?? "")")
        }
        // A retried batch (its events all stored, sealed) under a stale expectation is a duplicate, not a conflict.
        let retried = try await ledger.append(u1, expected: ["activity:R1": .exact(2)])
        #expect(retried.map(\.duplicate) == [true] && retried.map(\.position) == [3])
        let appended = try await ledger.append(next, expected: ["activity:R1": .exact(4)])
        #expect(appended.map(\.position) == [10] && appended.map(\.version) == [5] && appended.map(\.duplicate) == [false])
        #expect(try await ledger.verify().ok)

        // A batch mixing a sealed duplicate, a new row of R2 (whose 3 events are sealed) and a new stream.
        let mixed = try await ledger.append(
            Self.events(F.lines(
                F.update("R2", at: 4, state: #"{"eta":9}"#, eventID: "v1"),
                F.update("R2", at: 7, state: #"{"eta":7}"#, eventID: "v3"),
                F.request("R3", at: 7))),
            expected: ["activity:R2": .exact(3)])
        #expect(mixed.map(\.position) == [6, 11, 12] && mixed.map(\.duplicate) == [true, false, false])
        #expect(mixed.map(\.version) == [2, 4, 1])

        // Seal part of the new rows: R2 now has sealed events, then a sealed one in a later segment, then rows.
        _ = try ledger.store.seal(through: 11)
        let moreR2 = try await ledger.append(
            Self.events(F.update("R2", at: 8, state: #"{"eta":6}"#, eventID: "v4")), expected: ["activity:R2": .exact(4)])
        #expect(moreR2.map(\.position) == [13] && moreR2.map(\.version) == [5])
        let stats = try ledger.store.stats()
        #expect(stats.sealedEvents == 11 && stats.unsealedEvents == 2)

        let all = try Self.scan(ledger)
        #expect(all.map(\.position) == Array(1...13))
        #expect(Array(all.prefix(9)) == before)
        let verify = try await ledger.verify()
        #expect(verify.ok && verify.checked == 13, "\(verify.reason ?? "")")
        #expect(verify.lastGood == (try await ledger.digest()))

        let r2 = try await ledger.pool.read { db in try ledger.store.events(in: db, stream: "activity:R2") }
        #expect(r2.map(\.version) == [1, 2, 3, 4, 5])
        #expect(r2.map(\.position) == [4, 6, 7, 11, 13])
        #expect(r2 == all.filter { $0.stream == "activity:R2" })
        let fromThree = try await ledger.pool.read { db in try ledger.store.events(in: db, stream: "activity:R2", fromVersion: 3) }
        #expect(fromThree.map(\.version) == [3, 4, 5])
        let timeline = try await ledger.timeline(activity: "R2")
        #expect(timeline.entries.map(\.event.position) == [4, 6, 7, 11, 13])

        // Lookups by id: sealed (old and newly sealed) and rows, each with the hash the chain gives it.
        for (id, position) in [("u1", 3), ("v1", 6), ("u3", 10), ("v3", 11), ("v4", 13)] as [(String, Int64)] {
            let found = try await ledger.event(id: id)
            #expect(found.position == position, "\(id)")
            #expect(found.hash == all[Int(position) - 1].hash, "\(id)")
        }
        await #expect(throws: LedgerError.self) { try await ledger.event(id: "u3", app: Self.appA) }
        let state = try await ledger.state(activity: "R2", at: F.instant(10))
        #expect(state.displayed?.state == ["eta": 6] && state.events == 5)
    }

    @Test("a file whose every event is sealed takes its next append from the last segment's hash")
    func appendOnAFullySealedFile() async throws {
        let directory = TemporaryDirectory(prefix: "sealed-append")
        let path = directory.file("ledger.sqlite")
        let digest: Digest
        do {
            let ledger = try Self.open(path)
            _ = try await ledger.append(Self.events(Self.initial))
            digest = try await ledger.digest()
            _ = try await ledger.seal()
        }
        // Reopened: nothing in memory remembers the tail.
        let ledger = try Self.open(path)
        #expect(try ledger.store.stats().unsealedEvents == 0)
        #expect(try await ledger.digest() == digest)
        let added = try await ledger.append(Self.events(F.update("R1", at: 9, state: #"{"eta":0}"#, eventID: "u9")))
        #expect(added.map(\.position) == [8] && added.map(\.version) == [5])
        let verify = try await ledger.verify()
        #expect(verify.ok && verify.checked == 8, "\(verify.reason ?? "")")
        #expect(try await ledger.verify(upTo: digest).ok)
    }
}
