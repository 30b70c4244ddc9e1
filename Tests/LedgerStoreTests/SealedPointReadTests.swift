import Foundation
import GRDB
import LedgerStore
import Logging
import Testing

/// Point reads that show hashes (by stream, by id, by position) of sealed events in a store that has not seen
/// their segments yet: the hashes are computed from the segments' blocks (on two threads when a segment has
/// many blocks), and must be the hashes the rows had before sealing.
@Suite("Point reads of sealed events in a fresh process")
struct SealedPointReadTests {
    /// 2,000 events over `streams` streams, in segments of 512: with 300 streams a segment has ~300 blocks (hashed
    /// on two threads), with 12 it has 12 (one thread).
    static func sealedFile(streams: Int) async throws -> (fixture: StoreFixture, events: [RecordedEvent]) {
        var configuration = StoreFixture.fastConfiguration
        configuration.segmentEvents = 512
        let fixture = try StoreFixture(configuration: configuration)
        var random = SystemRandomNumberGenerator()
        for start in stride(from: 0, to: 2_000, by: 100) {
            _ = try await fixture.store.append(AppendBatch(events: (start..<(start + 100)).map { index in
                event(
                    "activity:P\(Int.random(in: 0..<streams, using: &random))", index % 3 == 0 ? "push" : "update",
                    at: Int64(index), payload: SealedDamageTests.payload(index))
            }))
        }
        let events = try SealMigrationTests.all(fixture.store)
        #expect(try fixture.store.seal().sealedThrough == 2_000)
        return (fixture, events)
    }

    @Test("by stream, by id and by position, each sealed event comes with the hash its row had", arguments: [300, 12])
    func coldPointReads(streams: Int) async throws {
        let (fixture, before) = try await Self.sealedFile(streams: streams)
        let blocks = try await fixture.store.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT min(blocks) FROM segments WHERE last_position - first_position = 511")
        }
        #expect(streams == 12 ? blocks == 12 : blocks! >= 64)
        for name in Set(before.map(\.stream)).sorted() {
            // A store opened afresh for each stream knows no segment's hashes yet.
            let cold = try fixture.reopen()
            let read = try await cold.pool.read { db in try cold.events(in: db, stream: name) }
            #expect(read == before.filter { $0.stream == name }, "\(name)")
        }
        let cold = try fixture.reopen()
        for index in [0, 1, 511, 512, 777, 1_535, 1_999] {
            let byID = try await cold.pool.read { db in try cold.event(in: db, id: before[index].id) }
            #expect(byID == before[index])
            let fresh = try fixture.reopen()
            let byPosition = try await fresh.pool.read { db in try fresh.events(in: db, positions: [Int64(index + 1)]) }
            #expect(byPosition == [before[index]])
        }
    }

    @Test("a block that does not decompress fails a point read naming its segment's first position")
    func damagedBlock() async throws {
        let (fixture, before) = try await Self.sealedFile(streams: 300)
        let (block, stream, segment) = try await fixture.store.pool.read { db in
            let row = try #require(try Row.fetchOne(db, sql: """
                SELECT b.id, s.name, b.segment FROM segment_blocks b JOIN streams s ON s.id = b.stream
                WHERE b.segment = 513 ORDER BY b.id DESC LIMIT 1
                """))
            return (row[0] as Int64, row[1] as String, row[2] as Int64)
        }
        try await fixture.store.pool.write { db in
            try changeBlockBytes(db, block: block) { $0.replaceSubrange($0.startIndex..<($0.startIndex + notZstd.count), with: notZstd) }
        }
        // Another stream of that segment: its own blocks decode, but its hashes need every block of the segment.
        let other = try #require(
            before.first { $0.position >= segment && $0.position < segment + 512 && $0.stream != stream }?.stream)
        let cold = try fixture.reopen()
        let error = #expect(throws: StoreError.self) {
            _ = try cold.pool.read { db in try cold.events(in: db, stream: other) }
        }
        #expect(error?.message.hasPrefix("position \(segment): the segment of positions \(segment)…1024") == true, "\(String(describing: error))")
        // Without hashes the other stream still reads, and verify names the segment's first position.
        let unhashed = try await cold.pool.read { db in try cold.events(in: db, stream: other, hashes: false) }
        #expect(unhashed.map(\.id) == before.filter { $0.stream == other }.map(\.id))
        let report = try cold.verify()
        #expect(!report.ok && report.firstBadPosition == segment)
    }
}
