import Foundation
import GRDB
import LedgerStore
import Testing

/// `forEachEventView` lends each event as bytes of what is read (a sealed block, a row's event): it must show
/// every field `forEachEvent` shows, in the same order, from any starting position, over sealed segments and rows.
@Suite("Scans that lend events as views")
struct EventViewScanTests {
    /// 2,000 sealed events (segments of 512, ~300 blocks each) and 300 rows after them.
    static func mixedFile() async throws -> StoreFixture {
        let (fixture, _) = try await SealedPointReadTests.sealedFile(streams: 300)
        for start in stride(from: 2_000, to: 2_300, by: 100) {
            _ = try await fixture.store.append(AppendBatch(events: (start..<(start + 100)).map { index in
                event("activity:R\(index % 7)", at: Int64(index), payload: SealedDamageTests.payload(index))
            }))
        }
        return fixture
    }

    /// What the view scan saw after `after`: each view built into an event (no hash), with the position `body` got.
    static func viewed(_ store: EventStore, after: Int64, stoppingAfter limit: Int = .max) throws -> [RecordedEvent] {
        var seen: [RecordedEvent] = []
        try store.pool.read { db in
            try store.forEachEventView(in: db, after: after, transform: { $0.recorded() }) { position, event in
                #expect(position == event.position)
                seen.append(event)
                return seen.count < limit
            }
        }
        return seen
    }

    @Test("from any position, views give the events a scan gives, sealed and rows alike")
    func sameEvents() async throws {
        let fixture = try await Self.mixedFile()
        var all: [RecordedEvent] = []
        try fixture.store.forEachEvent(after: 0, hashes: false) { event in
            var event = event
            event.hash = []
            all.append(event)
            return true
        }
        #expect(all.count == 2_300)
        #expect(all.map(\.position) == Array(1...2_300))
        for after: Int64 in [0, 1, 511, 512, 1_000, 1_999, 2_000, 2_150, 2_300] {
            let store = try fixture.reopen()
            #expect(try Self.viewed(store, after: after) == Array(all.dropFirst(Int(after))), "after \(after)")
        }
        // Stopping: exactly what the body asked for, across a segment's end and into the rows.
        for limit in [1, 512, 513, 2_001] {
            #expect(try Self.viewed(fixture.store, after: 0, stoppingAfter: limit) == Array(all.prefix(limit)))
        }
    }

    @Test("a block that does not decompress fails the scan naming its segment's first position")
    func damagedBlock() async throws {
        let fixture = try await Self.mixedFile()
        try await fixture.store.pool.write { db in
            let block = try #require(try Int64.fetchOne(db, sql: "SELECT max(id) FROM segment_blocks WHERE segment = 1025"))
            try changeBlockBytes(db, block: block) { $0.replaceSubrange($0.startIndex..<($0.startIndex + notZstd.count), with: notZstd) }
        }
        var seen: [Int64] = []
        let error = #expect(throws: StoreError.self) {
            try fixture.store.pool.read { db in
                try fixture.store.forEachEventView(in: db, after: 0, transform: { $0.position }) { position, _ in
                    seen.append(position)
                    return true
                }
            }
        }
        #expect(error?.message.hasPrefix("position 1025: the segment of positions 1025…1536") == true, "\(String(describing: error))")
        // Every position before the damaged segment, none of it or after it.
        #expect(seen == Array(1...1_024))
    }
}
