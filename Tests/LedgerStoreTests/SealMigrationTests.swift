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
                DROP TABLE segments; DROP TABLE segment_blocks; DROP TABLE sealed_ids; DROP TABLE segment_data;
                DELETE FROM store_counters WHERE name = 'sealed_bytes';
                DELETE FROM grdb_migrations WHERE identifier IN ('002_sealed_segments', '003_packed_segments');
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

    @Test("segments sealed in 002's layout (each block's bytes in its row) read the same after 003; later segments are packed beside them")
    func segmentsBeforePacking() async throws {
        var configuration = StoreFixture.fastConfiguration
        configuration.segmentEvents = 600
        let fixture = try StoreFixture(configuration: configuration)
        for round in 0..<4 {
            _ = try await fixture.store.append(AppendBatch(events: (0..<500).map { index in
                event("activity:A\((round * 500 + index) % 23)", at: Int64(round * 1000 + index))
            }))
        }
        let before = try fixture.store.digest()
        _ = try fixture.store.seal()
        let exported = try Self.all(fixture.store)
        // The file as 002 left it: every block's bytes in its own row, no packed blobs, no record of 003.
        try await fixture.store.pool.write { db in
            try db.execute(sql: """
                UPDATE segment_blocks SET data = substr(
                    (SELECT d.data FROM segment_data d WHERE d.segment = segment_blocks.segment), data_offset + 1, data_length);
                DROP TABLE segment_data;
                ALTER TABLE segment_blocks DROP COLUMN data_offset;
                ALTER TABLE segment_blocks DROP COLUMN data_length;
                DELETE FROM grdb_migrations WHERE identifier = '003_packed_segments';
                """)
        }
        let store = try fixture.reopen(configuration)
        let legacy = try await store.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM segment_blocks WHERE data_length IS NULL AND length(data) > 0")
        }
        #expect(legacy == (try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM segment_blocks") }))
        #expect(try Self.all(store) == exported)
        #expect(try store.verify().ok && store.verify(upTo: before).ok)
        // Point reads (a stream with hashes, an event by id) in another process, whose hashes come from the blocks.
        let cold = try fixture.reopen(configuration)
        for stream in ["activity:A0", "activity:A7", "activity:A22"] {
            let events = try await cold.pool.read { db in try cold.events(in: db, stream: stream) }
            #expect(events == exported.filter { $0.stream == stream })
        }
        // Later segments are packed beside the old ones; everything still reads the same and verifies.
        _ = try await store.append(AppendBatch(events: (0..<1_300).map { index in
            event("activity:A\(index % 23)", at: Int64(5_000 + index))
        }))
        let grown = try Self.all(store)
        _ = try store.seal()
        #expect(try Self.all(store) == grown)
        let (packed, newer) = try await store.pool.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM segment_data"),
             try Int.fetchOne(db, sql: "SELECT count(*) FROM segments WHERE first_position > 2000"))
        }
        #expect(packed == newer && packed == 3)
        #expect(try store.verify().ok && store.verify(upTo: before).ok)
        // Damage to an old block is still found, at its segment.
        try await store.pool.write { db in
            try changeBlockBytes(db, block: 1) { $0.replaceSubrange($0.startIndex..<($0.startIndex + notZstd.count), with: notZstd) }
        }
        let report = try store.verify()
        #expect(!report.ok && report.firstBadPosition == 1, "\(report.reason ?? "ok")")
    }

    /// `Fixtures/sealed-2026-11-28.sqlite`: written by the release before 2026-11-29 (5364615's `activity-ledger`)
    /// from `ledger-bench corpus --activities 8 --events-per-activity 20 --seed 2026`: its first 120 lines imported
    /// and sealed (one segment in that release's layouts: each block's events one record after another, 4-byte check
    /// values, ids in `sealed_ids` under 47-bit keys, no migration 004), then its last 40 imported (rows),
    /// checkpointed and vacuumed.
    static let earlierDigest = "160:434a1cb9bbf8c28f5662b322570f4e437694cf8e59654ef7cffaccd8a1332998"

    @Test("a file sealed in the layouts before 2026-11-29 reads, verifies and finds its ids; segments sealed now sit beside its own")
    func earlierLayouts() async throws {
        let fixture = try StoreFixture()
        let source = try #require(Bundle.module.url(forResource: "Fixtures/sealed-2026-11-28", withExtension: "sqlite"))
        try FileManager.default.removeItem(atPath: fixture.path)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: fixture.path + suffix) }
        try FileManager.default.copyItem(at: source, to: URL(fileURLWithPath: fixture.path))
        let store = try fixture.reopen()
        let digest = try #require(Digest(Self.earlierDigest))
        #expect(try store.digest() == digest)
        #expect(try store.verify().ok && store.verify(upTo: digest).ok)
        let exported = try Self.all(store)
        #expect(exported.count == 160 && exported[0].id == "af3b1d1d-fca1-4d4d-9ee0-3e0f3ad1dbf6")
        func byID(_ store: EventStore) async throws -> [RecordedEvent?] {
            try await store.pool.read { db in try exported.map { try store.event(in: db, id: $0.id) } }
        }
        // Every id is found (opening migrated the file to 004): the sealed ones under their keys, the rows by their
        // index.
        #expect(try await byID(store) == exported.map(Optional.init))
        // A re-sent sealed id is a no-op.
        let first = exported[0]
        let again = try await store.append(AppendBatch(events: [
            NewEvent(id: first.id, stream: first.stream, type: first.type, at: first.at, payload: first.payload)
        ]))
        #expect(again.positions == [1] && again.duplicate == [true])
        // Sealing the rows writes today's layouts beside the old segment; everything reads and verifies the same.
        let report = try store.seal()
        #expect(report.events == 40 && report.sealedThrough == 160)
        let layouts = try await store.pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT first_position, length(checks) / (last_position - first_position + 1) FROM segments"
            ).map { [$0[0] as Int64, $0[1] as Int64] }
        }
        #expect(layouts == [[1, 4], [121, 2]])
        // The 120 ids sealed before stay under their keys; the 40 sealed now are entries of 3 bytes in buckets.
        let (keys, entryBytes) = try await store.pool.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM sealed_ids"),
             try Int.fetchOne(db, sql: "SELECT sum(length(entries)) FROM sealed_id_buckets"))
        }
        #expect(keys == 120 && entryBytes == 40 * 3)
        #expect(try Self.all(store) == exported)
        #expect(try store.verify().ok && store.verify(upTo: digest).ok)
        let cold = try fixture.reopen()
        #expect(try await byID(cold) == exported.map(Optional.init))
        #expect(try Self.all(cold) == exported)
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
