import Foundation
import GRDB
import LedgerStore
import Logging
import Testing

@Suite("Sealing files written before segments")
struct SealMigrationTests {
    @Test("a file without the segment tables opens, gains them by migration, seals, and its digest still verifies")
    func fileBeforeSegments() async throws {
        let fixture = try StoreFixture()
        for round in 0..<6 {
            _ = try await fixture.store.append(AppendBatch(events: (0..<500).map { index in
                event("activity:A\((round * 500 + index) % 37)", at: Int64(round * 1000 + index))
            }))
        }
        let before = try fixture.store.digest()
        let exported = try Self.all(fixture.store)
        // The file as the previous version left it: no segment tables, no record of migration 002.
        try await fixture.store.pool.write { db in
            try db.execute(sql: """
                DROP TABLE segments; DROP TABLE segment_blocks; DROP TABLE sealed_ids;
                DELETE FROM store_counters WHERE name = 'sealed_bytes';
                DELETE FROM grdb_migrations WHERE identifier = '002_sealed_segments';
                """)
        }
        var configuration = StoreFixture.fastConfiguration
        configuration.segmentEvents = 700
        let store = try fixture.reopen(configuration)
        let report = try store.seal()
        #expect(report.events == 3000 && report.segments == 5 && report.sealedThrough == 3000)
        #expect(try store.verify(upTo: before).ok)
        #expect(try Self.all(store) == exported)
        let stats = try store.stats()
        #expect(stats.sealedEvents == 3000 && stats.unsealedEvents == 0 && stats.segments == 5)
        // Appends chain on after a fully sealed log, and a re-sent sealed id is a no-op.
        let first = exported[0]
        let again = try await store.append(AppendBatch(events: [
            NewEvent(id: first.id, stream: first.stream, type: first.type, at: first.at, payload: first.payload),
            event("activity:A1", at: 9_999),
        ]))
        #expect(again.positions == [1, 3001] && again.duplicate == [true, false])
        #expect(again.versions[1] == Int64(exported.filter { $0.stream == "activity:A1" }.count) + 1)
        #expect(try store.verify().ok && store.verify(upTo: before).ok)
    }

    /// Every event with its hash, in order.
    static func all(_ store: EventStore) throws -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        try store.forEachEvent(after: 0) { event in
            events.append(event)
            return true
        }
        return events
    }
}
