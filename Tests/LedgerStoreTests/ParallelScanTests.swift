import Foundation
import GRDB
import LedgerStore
import LedgerTesting
import Testing

/// Scans of more than 12 blocks of 512 positions are read by two threads on connections of their own
/// (`ParallelScan`); these logs are long enough for that, with a last block that is not full.
///
/// Serialized: each test blocks a thread of Swift's cooperative pool (two here) while it scans, and the HTTP
/// suites' long-poll timings need that pool.
@Suite("Scanning a long log on two reading connections", .serialized)
struct ParallelScanTests {
    static let count = 7_000

    /// A store of `count` corpus events; a dictionary is trained after the first 2000.
    static func filled(count: Int = count) async throws -> StoreFixture {
        var configuration = StoreFixture.fastConfiguration
        configuration.firstDictionaryAfter = 2_000
        configuration.trainsInBackground = false
        let fixture = try StoreFixture(configuration: configuration)
        try await append(CorpusGenerator(seed: 34, activities: count / 20, eventsPerActivity: 20).prefix(count), to: fixture.store)
        return fixture
    }

    static func append(_ corpus: some Sequence<CorpusEvent>, to store: EventStore) async throws {
        let all = Array(corpus)
        for start in stride(from: 0, to: all.count, by: 1_000) {
            _ = try await store.append(AppendBatch(events: all[start..<min(all.count, start + 1_000)].map(Self.newEvent)))
        }
    }

    static func newEvent(_ event: CorpusEvent) -> NewEvent {
        NewEvent(id: event.id, stream: event.stream, type: event.type, at: event.at, recordedAt: event.at + 5, payload: event.payload)
    }

    static func positions(_ store: EventStore, after: Int64 = 0) throws -> [Int64] {
        var positions: [Int64] = []
        try store.forEachEvent(after: after) { positions.append($0.position); return true }
        return positions
    }

    /// Whether `positions` is exactly `range`, in order (a failure prints counts, not 9,000 numbers).
    static func isRun(_ positions: [Int64], _ range: ClosedRange<Int64>) -> Bool {
        positions.elementsEqual(range)
    }

    @Test("every event in order, equal to reading each position alone")
    func wholeScanEqualsPointReads() async throws {
        let fixture = try await Self.filled()
        var scanned: [RecordedEvent] = []
        try fixture.store.forEachEvent(after: 0) { scanned.append($0); return true }
        let alone = try await fixture.store.pool.read { (db) throws in
            try fixture.store.events(in: db, positions: (1...Int64(Self.count)).map { $0 })
        }
        #expect(scanned.count == Self.count)
        let same = scanned == alone
        #expect(same, "the scan differs from point reads")
    }

    @Test("a scan starts right after the given position", arguments: [1, 513, 2_049, 855])
    func startsAfter(position: Int64) async throws {
        let fixture = try await Self.filled()
        let positions = try Self.positions(fixture.store, after: position)
        #expect(Self.isRun(positions, (position + 1)...Int64(Self.count)), "\(positions.count) positions")
    }

    @Test("a scan stops when the body says so, before, at and after the readers start", arguments: [1, 2_049, 2_600, 6_999])
    func stopsEarly(after wanted: Int) async throws {
        #expect(try await Self.filled().eventsSeen(stoppingAfter: wanted) == wanted)
    }

    @Test("a payload that does not decompress throws naming its position, after every earlier event", arguments: [3, 6_999])
    func corruptPayload(position: Int64) async throws {
        let (seen, error) = try await Self.filled().scanWithCorruptPayload(at: position)
        #expect(error?.code == .corruptPayload)
        #expect(error?.message.contains("position \(position)") == true, "\(String(describing: error))")
        #expect(position == 1 ? seen.isEmpty : Self.isRun(seen, 1...(position - 1)), "\(seen.count) positions")
    }

    @Test("a row naming a stream missing from the file throws naming its position, after every earlier event")
    func missingStream() async throws {
        let fixture = try await Self.filled()
        let (position, stream) = try await fixture.store.pool.write { (db) throws -> (Int64, Int64) in
            let row = try #require(try Row.fetchOne(db, sql: "SELECT position, stream FROM events WHERE position > 5000 LIMIT 1"))
            let stream: Int64 = row[1]
            let first = try Int64.fetchOne(db, sql: "SELECT min(position) FROM events WHERE stream = ?", arguments: [stream]) ?? 0
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            try db.execute(sql: "DELETE FROM streams WHERE id = ?", arguments: [stream])
            return (first, stream)
        }
        var positions: [Int64] = []
        let error = #expect(throws: StoreError.self) {
            try fixture.store.forEachEvent(after: 0) { positions.append($0.position); return true }
        }
        #expect(error?.message.contains("position \(position)") == true, "stream \(stream): \(String(describing: error))")
        #expect(Self.isRun(positions, 1...(position - 1)), "\(positions.count) positions")
    }

    @Test("rows the caller's transaction wrote and has not committed are read on its own connection")
    func uncommittedRowsAreScanned() async throws {
        let fixture = try await Self.filled(count: 2_000)
        let more = Array(CorpusGenerator(seed: 35, activities: 400, eventsPerActivity: 20).prefix(5_000))
        let scanned = try await fixture.store.importTransaction { session -> [Int64] in
            for start in stride(from: 0, to: more.count, by: 1_000) {
                _ = try session.append(AppendBatch(events: more[start..<(start + 1_000)].map(Self.newEvent)))
            }
            var positions: [Int64] = []
            try fixture.store.forEachEvent(in: session.db, after: 0) { positions.append($0.position); return true }
            return positions
        }
        #expect(Self.isRun(scanned, 1...7_000), "\(scanned.count) positions")
    }

    @Test("verify over the reading connections names a changed byte, a deleted row and an undecodable row exactly", arguments: [2, 6_500])
    func verifyNamesDamage(position: Int64) async throws {
        let fixture = try await Self.filled()
        let before = try fixture.store.verify()
        #expect(before.ok && before.checked == Int64(Self.count))
        let digest = try await fixture.store.pool.read { (db) throws in
            try #require(try fixture.store.events(in: db, positions: [position - 1]).first).hash
        }
        try await fixture.store.pool.write { (db) throws in
            var payload = try #require(
                try Data.fetchOne(db, sql: "SELECT payload FROM events WHERE position = ?", arguments: [position]))
            payload[payload.startIndex + payload.count / 2] ^= 0x01
            try db.execute(sql: "UPDATE events SET payload = ? WHERE position = ?", arguments: [payload, position])
        }
        let changed = try fixture.store.verify()
        #expect(changed.firstBadPosition == position && changed.checked == position - 1, "\(changed)")
        // The log before the damage is still proven unchanged by a digest taken there (the whole log is not).
        let proven = try fixture.store.verify(upTo: Digest(position: position - 1, hash: digest))
        #expect(proven.digestProven == true && !proven.ok && proven.firstBadPosition == position)
        try await fixture.store.pool.write { (db) throws in
            try db.execute(sql: "UPDATE events SET payload = X'28B52FFD2010FFFF' WHERE position = ?", arguments: [position])
        }
        let undecodable = try fixture.store.verify()
        #expect(undecodable.firstBadPosition == position && undecodable.reason?.contains("does not decode") == true, "\(undecodable)")
        try await fixture.store.pool.write { (db) throws in
            try db.execute(sql: "DELETE FROM events WHERE position = ?", arguments: [position])
        }
        let missing = try fixture.store.verify()
        #expect(missing.firstBadPosition == position && missing.reason?.contains("missing") == true, "\(missing)")
    }

    @Test("a transform pairs each event with its own value, and its error comes in order", arguments: [7, 6_100])
    func transform(failing: Int64) async throws {
        struct Unparsable: Error { var position: Int64 }
        let fixture = try await Self.filled()
        var positions: [Int64] = []
        let error = #expect(throws: Unparsable.self) {
            try fixture.store.pool.read { db in
                try fixture.store.forEachEvent(in: db, after: 0, transform: { event -> String in
                    if event.position == failing { throw Unparsable(position: event.position) }
                    return "\(event.position):\(event.payload.count)"
                }) { event, value in
                    #expect(value == "\(event.position):\(event.payload.count)")
                    positions.append(event.position)
                    return true
                }
            }
        }
        #expect(error?.position == failing)
        #expect(Self.isRun(positions, 1...(failing - 1)), "\(positions.count) positions")
    }
}
