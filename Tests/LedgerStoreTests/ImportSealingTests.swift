import Foundation
import GRDB
import LedgerStore
import Testing

/// An import into a log with no rows seals whole segments as it goes (`ImportSealer`): the log it leaves must be,
/// event for event and hash for hash, the one a row import leaves, and every re-sent id must be found wherever
/// its first copy is (held for the next segment, in a segment of this import, in a segment of an earlier one).
@Suite("Imports that seal as they go")
struct ImportSealingTests {
    static let segmentEvents = 256

    static func configuration(filedBytes: Int? = nil) -> StoreConfiguration {
        var configuration = StoreFixture.fastConfiguration
        configuration.segmentEvents = segmentEvents
        // A dictionary trained early, on its thread: the import holds events until it is there.
        configuration.firstDictionaryAfter = 300
        configuration.dictionarySize = 4096
        if let filedBytes { configuration.importFiledBytes = filedBytes }
        return configuration
    }

    /// `count` events over 23 streams; ids alternate between the two stored layouts (canonical UUIDs as 16 bytes,
    /// other text as text), some upper-case; every payload differs.
    static func corpus(_ count: Int, seed: Int = 0) -> [NewEvent] {
        (0..<count).map { index in
            let number = seed * 1_000_000 + index
            let id: String
            switch index % 3 {
            case 0: id = String(format: "%08x-0000-4000-8000-%012x", seed, index)
            case 1: id = "event-\(number)"
            default: id = String(format: "%08X-0000-4000-8000-%012X", seed, index)
            }
            let payload = #"{"n":\#(number),"eta":\#(index % 17),"note":"stop \#(index % 5) of \#(index % 11)"}"#
            return NewEvent(
                id: id, stream: "activity:S\(index % 23)", type: index % 7 == 0 ? "end" : "update",
                at: 1_700_000_000_000 + Int64(index) * 1_000, recordedAt: 1_800_000_000_000 + Int64(index),
                payload: Array(payload.utf8))
        }
    }

    /// Imports `events` in batches of `batch`; returns every result.
    static func importing(_ events: [NewEvent], into store: EventStore, sealing: Bool, batch: Int = 100)
        async throws -> AppendResult
    {
        try await store.importTransaction(sealing: sealing) { session in
            var all = AppendResult(positions: [], duplicate: [])
            for start in stride(from: 0, to: events.count, by: batch) {
                let result = try session.append(AppendBatch(events: Array(events[start..<min(events.count, start + batch)])))
                all.positions += result.positions
                all.duplicate += result.duplicate
                all.versions += result.versions
            }
            return all
        }
    }

    static func rows(_ store: EventStore) async throws -> Int {
        try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM events") ?? -1 }
    }

    @Test("an import into a new file writes whole segments and rows after them; every event, id, stream, digest and count is a row import's")
    func sealedImportEqualsRowImport() async throws {
        var events = Self.corpus(1_359)
        // Re-sent with the same content: one whose first copy is long sealed, one still held for its segment.
        events.insert(events[5], at: 1_000)
        events.insert(events[690], at: 700)
        let sealed = try StoreFixture(configuration: Self.configuration())
        let rows = try StoreFixture(configuration: Self.configuration())
        let sealedResult = try await Self.importing(events, into: sealed.store, sealing: true)
        let rowResult = try await Self.importing(events, into: rows.store, sealing: false)
        #expect(sealedResult == rowResult)
        #expect(sealedResult.duplicate.filter { $0 }.count == 2)
        #expect(sealedResult.positions[700] == 691 && sealedResult.positions[1_001] == 6)

        let stats = try sealed.store.stats()
        #expect(stats.events == 1_359 && stats.segments == 5 && stats.sealedEvents == 5 * 256)
        #expect(try await Self.rows(sealed.store) == 1_359 - 5 * 256)
        #expect(try rows.store.stats().sealedEvents == 0)
        // Every segment waited for the first dictionary (trained on its own thread).
        let plain = try await sealed.store.pool.read { (db) throws in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM segments WHERE dictionary IS NULL")
        }
        #expect(plain == 0)

        let all = try SealMigrationTests.all(sealed.store)
        #expect(all.count == 1_359)
        #expect(all == (try SealMigrationTests.all(rows.store)))
        #expect(try sealed.store.digest() == rows.store.digest())
        #expect(try sealed.store.verify().ok)
        try await sealed.store.pool.read { (db) throws in
            for event in all {
                #expect(try sealed.store.event(in: db, id: event.id) == event, "\(event.id)")
            }
            for stream in 0..<23 {
                let name = "activity:S\(stream)"
                let mine = try sealed.store.events(in: db, stream: name, atMost: .max)
                let theirs = try rows.store.pool.read { try rows.store.events(in: $0, stream: name, atMost: .max) }
                #expect(mine == theirs && !mine.isEmpty, "\(name)")
            }
        }

        // Appends go on as rows after it; sealing takes the rest; the chain holds throughout.
        let more = try await sealed.store.append(AppendBatch(events: Self.corpus(40, seed: 1) + [events[3]]))
        #expect(more.positions.last == 4 && more.duplicate.filter { $0 }.count == 1)
        let report = try sealed.store.seal()
        #expect(report.sealedThrough == 1_399)
        #expect(try sealed.store.verify().ok)
        #expect(try sealed.store.stats().unsealedEvents == 0)
    }

    /// An id re-sent at any distance behind its first copy — still held, in the segment just written, in one
    /// written before — is a duplicate, and the log is a row import's (with batches that end anywhere in a
    /// segment).
    @Test("ids re-sent at any distance behind their first copy are duplicates, as in a row import",
          arguments: [1, 120, 255, 256, 300, 511, 700])
    func resentAtAnyDistance(gap: Int) async throws {
        var events = Self.corpus(1_800)
        // Copies inserted from the end backwards, so each lands `gap` events after its first copy.
        for first in stride(from: 1_800 - gap - 1, through: 0, by: -97) {
            events.insert(events[first], at: first + gap + 1)
        }
        let sealed = try StoreFixture(configuration: Self.configuration())
        let rows = try StoreFixture(configuration: Self.configuration())
        let sealedResult = try await Self.importing(events, into: sealed.store, sealing: true, batch: 37)
        #expect(sealedResult == (try await Self.importing(events, into: rows.store, sealing: false, batch: 37)))
        #expect(sealedResult.duplicate.filter { $0 }.count == events.count - 1_800)
        #expect(try sealed.store.stats().sealedEvents == 7 * 256)
        #expect(try SealMigrationTests.all(sealed.store) == (try SealMigrationTests.all(rows.store)))
        #expect(try sealed.store.verify().ok)
    }

    @Test("an id re-sent with other content refuses the whole import, wherever its first copy is",
          arguments: [10, 600, -1])
    func conflictingIDRefusesImport(firstCopy: Int) async throws {
        let fixture = try StoreFixture(configuration: Self.configuration())
        var earlier: [NewEvent] = []
        if firstCopy < 0 {
            // The first copy is in a segment of an earlier import, which left no rows.
            earlier = Self.corpus(512, seed: 3)
            _ = try await Self.importing(earlier, into: fixture.store, sealing: true)
            #expect(try await Self.rows(fixture.store) == 0)
        }
        let before = try fixture.store.stats()
        // 600: still held for its segment at 610. 10: sealed by then (more than the wait for the first dictionary,
        // `firstDictionaryAfter` + 2 segments, lies between).
        var events = Self.corpus(1_600)
        var changed = firstCopy < 0 ? earlier[100] : events[firstCopy]
        changed.payload = Array(#"{"n":-1}"#.utf8)
        events.insert(changed, at: firstCopy == 600 ? 610 : 1_550)
        let error = await #expect(throws: StoreError.self) {
            try await Self.importing(events, into: fixture.store, sealing: true)
        }
        #expect(error?.code == .idConflict)
        #expect(error?.eventID == changed.id)
        let after = try fixture.store.stats()
        #expect(after.events == before.events && after.segments == before.segments)
        #expect(try fixture.store.verify().ok)
    }

    /// A new file: no lookup asks the file's buckets unless the id's `SealedIDs.Filter` bit says this import may
    /// have filed it, and those entries were written there mid-import (every few segments at 1,000 bytes).
    @Test("ids re-sent after their entries went to the file mid-import are found there", arguments: [false, true])
    func resentAfterEntriesWritten(conflicting: Bool) async throws {
        let fixture = try StoreFixture(configuration: Self.configuration(filedBytes: 1_000))
        let events = Self.corpus(1_700, seed: 6)
        var resent = stride(from: 0, to: 600, by: 7).map { events[$0] }
        if conflicting { resent[40].payload = Array(#"{"n":-2}"#.utf8) }
        if conflicting {
            let error = await #expect(throws: StoreError.self) {
                try await Self.importing(events + resent, into: fixture.store, sealing: true)
            }
            #expect(error?.code == .idConflict && error?.eventID == resent[40].id)
            #expect(try fixture.store.stats().events == 0)
            return
        }
        let result = try await Self.importing(events + resent, into: fixture.store, sealing: true)
        #expect(result.duplicate.filter { $0 }.count == resent.count)
        #expect(Array(result.positions.suffix(resent.count)) == stride(from: 1, through: 600, by: 7).map { Int64($0) })
        let entries = try await fixture.store.pool.read { (db) throws in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM sealed_id_buckets")
        }
        let sealed = try fixture.store.stats().sealedEvents
        #expect((entries ?? 0) > 0 && sealed == 6 * 256)
    }

    @Test("an import into a file sealed to its end seals too, finds the ids sealed before, and keeps the chain",
          arguments: [nil, 1_000])
    func importAfterSealedImport(filedBytes: Int?) async throws {
        // filedBytes 1,000: the pending entries go to the file every few segments, so lookups ask it too.
        let fixture = try StoreFixture(configuration: Self.configuration(filedBytes: filedBytes))
        let first = Self.corpus(512, seed: 4)
        _ = try await Self.importing(first, into: fixture.store, sealing: true)
        #expect(try await Self.rows(fixture.store) == 0)
        let digest = try fixture.store.digest()

        let second = Self.corpus(1_100, seed: 5)
        let resent = stride(from: 0, to: 512, by: 5).map { first[$0] }
        let result = try await Self.importing(second + resent + second.prefix(300), into: fixture.store, sealing: true)
        #expect(result.duplicate.filter { $0 }.count == resent.count + 300)
        let stats = try fixture.store.stats()
        #expect(stats.events == 1_612 && stats.sealedEvents == 6 * 256)
        #expect(try fixture.store.verify(upTo: digest).ok)
        #expect(try fixture.store.verify().ok)
        try await fixture.store.pool.read { (db) throws in
            for event in first + second {
                #expect(try fixture.store.event(in: db, id: event.id)?.payload == event.payload, "\(event.id)")
            }
        }
    }

    /// The writer forgets its stream slots past 50,000 streams (`TransactionState.slotIndex`) and reloads a
    /// stream's version from the file, where the events held for the next segment are not yet: it must take
    /// them from `heldVersions`.
    @Test("a stream whose slot the writer forgot while its last event was held gets the next version")
    func versionsSurviveForgottenSlots() async throws {
        let fixture = try StoreFixture(configuration: Self.configuration())
        func one(_ stream: String, _ id: String) -> NewEvent {
            NewEvent(id: id, stream: stream, type: "update", at: 1, recordedAt: 1, payload: Array(#"{"n":1}"#.utf8))
        }
        // 49,990 streams, then X's first event, 20 new streams (the slots are forgotten at the 50,001st while
        // X's event is held), X's second event, and X's third after its first two are sealed.
        var events = (0..<49_990).map { one("activity:A\($0)", "a-\($0)") }
        events.append(one("activity:X", "x-1"))
        events += (0..<20).map { one("activity:B\($0)", "b-\($0)") }
        events.append(one("activity:X", "x-2"))
        events += (0..<1_000).map { one("activity:C\($0 % 10)", "c-\($0)") }
        events.append(one("activity:X", "x-3"))
        let result = try await Self.importing(events, into: fixture.store, sealing: true, batch: 500)
        #expect(result.versions[49_990] == 1 && result.versions[50_011] == 2 && result.versions.last == 3)
        #expect(try fixture.store.verify().ok)
        let versions = try await fixture.store.pool.read { db in
            try fixture.store.events(in: db, stream: "activity:X", atMost: .max).map(\.version)
        }
        #expect(versions == [1, 2, 3])
    }

    @Test("a file with rows, or an import asked not to seal, imports rows")
    func rowsStayRows() async throws {
        let fixture = try StoreFixture(configuration: Self.configuration())
        _ = try await fixture.store.append(AppendBatch(events: Self.corpus(3, seed: 6)))
        _ = try await Self.importing(Self.corpus(700, seed: 7), into: fixture.store, sealing: true)
        #expect(try fixture.store.stats().sealedEvents == 0)
        let fresh = try StoreFixture(configuration: Self.configuration())
        _ = try await Self.importing(Self.corpus(700, seed: 7), into: fresh.store, sealing: false)
        #expect(try fresh.store.stats().sealedEvents == 0)
        #expect(try await Self.rows(fresh.store) == 700)
    }
}
