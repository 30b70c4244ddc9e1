import Foundation
import GRDB
import LedgerStore
import LedgerTesting
import Testing

/// `forEachEvent` decodes long scans on a second thread, chunk by chunk (512 rows); these scans cross many
/// chunk boundaries, with rows written with and without a trained dictionary.
@Suite("Scanning the log on two threads")
struct ScanPipelineTests {
    static let count = 2_100

    /// A store of `count` corpus events; a dictionary is trained after the first 600.
    static func filled() async throws -> StoreFixture {
        var configuration = StoreFixture.fastConfiguration
        configuration.firstDictionaryAfter = 600
        configuration.trainsInBackground = false
        let fixture = try StoreFixture(configuration: configuration)
        let corpus = Array(CorpusGenerator(seed: 21, activities: count / 20, eventsPerActivity: 20).prefix(count))
        for start in stride(from: 0, to: corpus.count, by: 300) {
            let batch = corpus[start..<min(corpus.count, start + 300)].map {
                NewEvent(id: $0.id, stream: $0.stream, type: $0.type, at: $0.at, recordedAt: $0.at + 5, payload: $0.payload)
            }
            _ = try await fixture.store.append(AppendBatch(events: batch))
        }
        return fixture
    }

    @Test("a scan over many chunks hands over every event in order, equal to reading each position alone")
    func wholeScanEqualsPointReads() async throws {
        let fixture = try await Self.filled()
        let dictionaries = try await fixture.store.pool.read { (db) throws in
            try Int.fetchOne(db, sql: "SELECT count(DISTINCT dictionary) FROM events WHERE dictionary IS NOT NULL") ?? 0
        }
        #expect(dictionaries >= 1)
        var scanned: [RecordedEvent] = []
        try fixture.store.forEachEvent(after: 0) { scanned.append($0); return true }
        let alone = try await fixture.store.pool.read { (db) throws in
            try fixture.store.events(in: db, positions: (1...Int64(Self.count)).map { $0 })
        }
        #expect(scanned.count == Self.count)
        #expect(scanned == alone)
    }

    @Test("a scan starts right after the given position", arguments: [0, 511, 512, 513, 1_500, 2_099, 2_100])
    func startsAfter(position: Int64) async throws {
        let fixture = try await Self.filled()
        var positions: [Int64] = []
        try fixture.store.forEachEvent(after: position) { positions.append($0.position); return true }
        #expect(positions == Array((position + 1)..<(Int64(Self.count) + 1)))
    }

    @Test("a scan stops as soon as the body says so, at any point of any chunk", arguments: [1, 511, 512, 513, 1_000, 2_099])
    func stopsEarly(after wanted: Int) async throws {
        #expect(try await Self.filled().eventsSeen(stoppingAfter: wanted) == wanted)
    }

    @Test("a payload that does not decompress throws naming its position, after every earlier event", arguments: [3, 1_300])
    func corruptPayload(position: Int64) async throws {
        let (seen, error) = try await Self.filled().scanWithCorruptPayload(at: position)
        #expect(error?.code == .corruptPayload)
        #expect(error?.message.contains("position \(position)") == true)
        #expect(seen == Array(1..<position))
    }

    @Test("an error thrown by the body ends the scan with that error")
    func bodyThrows() async throws {
        struct Stop: Error {}
        let fixture = try await Self.filled()
        var seen = 0
        #expect(throws: Stop.self) {
            try fixture.store.forEachEvent(after: 0) { _ in
                seen += 1
                if seen == 900 { throw Stop() }
                return true
            }
        }
        #expect(seen == 900)
    }

    /// A whole-log scan with a transform, in GRDB's blocking read (so the body may mutate local state).
    static func scan<T: Sendable>(
        _ store: EventStore, transform: @escaping @Sendable (RecordedEvent) throws -> T,
        _ body: (RecordedEvent, T) throws -> Bool
    ) throws {
        try store.pool.read { db in try store.forEachEvent(in: db, after: 0, transform: transform, body) }
    }

    @Test("a transform runs beside the reading: each event comes with its own value, in order")
    func transformPairsWithItsEvent() async throws {
        let fixture = try await Self.filled()
        var pairs: [(Int64, String)] = []
        try Self.scan(fixture.store, transform: { "\($0.position):\($0.payload.count)" }) {
            pairs.append(($0.position, $1))
            #expect($1 == "\($0.position):\($0.payload.count)")
            return true
        }
        #expect(pairs.map(\.0) == Array(1...Int64(Self.count)))
    }

    @Test("an error of the transform is thrown in order, after every earlier event", arguments: [7, 1_300])
    func transformError(at failing: Int64) async throws {
        struct Unparsable: Error { var position: Int64 }
        let fixture = try await Self.filled()
        var positions: [Int64] = []
        let error = #expect(throws: Unparsable.self) {
            try Self.scan(fixture.store, transform: { event -> Int64 in
                if event.position == failing { throw Unparsable(position: event.position) }
                return event.position
            }) { event, _ in
                positions.append(event.position)
                return true
            }
        }
        #expect(error?.position == failing)
        #expect(positions == Array(1..<failing))
    }
}
