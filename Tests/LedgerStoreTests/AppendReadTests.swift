import Foundation
import GRDB
import LedgerStore
import LedgerTesting
import Testing

@Suite("Appending and reading back")
struct AppendReadTests {
    @Test("random batches read back exactly as appended, by stream, by id, by position and in order")
    func roundTrip() async throws {
        let fixture = try StoreFixture()
        var random = SeededRandom(seed: 11)
        var appended: [NewEvent] = []
        let corpus = Array(CorpusGenerator(seed: 3, activities: 30, eventsPerActivity: 12))
        var index = 0
        while index < corpus.count {
            let size = Int.random(in: 1...25, using: &random)
            let batch = corpus[index..<min(corpus.count, index + size)].map {
                NewEvent(id: $0.id, stream: $0.stream, type: $0.type, at: $0.at, recordedAt: $0.at + 5, payload: $0.payload)
            }
            let result = try await fixture.store.append(AppendBatch(events: batch))
            #expect(result.positions == Array(Int64(appended.count + 1)...Int64(appended.count + batch.count)))
            #expect(result.duplicate == Array(repeating: false, count: batch.count))
            appended += batch
            index += size
        }
        var read: [RecordedEvent] = []
        try fixture.store.forEachEvent(after: 0) { read.append($0); return true }
        #expect(read.count == appended.count)
        for (recorded, original) in zip(read, appended) {
            #expect(recorded.id == original.id && recorded.stream == original.stream && recorded.type == original.type)
            #expect(recorded.at == original.at && recorded.recordedAt == original.recordedAt)
            #expect(recorded.payload == original.payload)
            #expect(recorded.hash.count == 32)
        }
        let sample = read[read.count / 2]
        try await fixture.store.pool.read { (db) throws in
            let stream = try fixture.store.events(in: db, stream: sample.stream)
            #expect(stream.map(\.version) == Array(1...Int64(stream.count)))
            #expect(stream.allSatisfy { $0.stream == sample.stream })
            #expect(try fixture.store.event(in: db, id: sample.id) == sample)
            #expect(try fixture.store.events(in: db, positions: [sample.position, 1]).map(\.position) == [sample.position, 1])
            #expect(try fixture.store.streamVersion(in: db, stream: sample.stream) == Int64(stream.count))
            #expect(try fixture.store.streamVersion(in: db, stream: "activity:none") == nil)
            #expect(try fixture.store.events(in: db, stream: sample.stream, fromVersion: 3).first?.version == 3)
        }
        #expect(try fixture.store.verify().ok)
    }

    @Test("ids that are not lower-case UUIDs round-trip as text")
    func textIDs() async throws {
        let fixture = try StoreFixture()
        let ids = ["A1B2C3D4-0000-4000-8000-000000000000", "order-17", "é", "00000000-0000-4000-8000-00000000000g"]
        _ = try await fixture.store.append(AppendBatch(events: ids.map { event("s", id: $0) }))
        try await fixture.store.pool.read { (db) throws in
            for id in ids { #expect(try fixture.store.event(in: db, id: id)?.id == id) }
        }
        #expect(try fixture.store.verify().ok)
    }

    @Test("forEachEvent starts after the given position and stops when the body says so")
    func streamingStops() async throws {
        let fixture = try StoreFixture()
        _ = try await fixture.store.append(AppendBatch(events: (0..<10).map { _ in event("s") }))
        var seen: [Int64] = []
        try fixture.store.forEachEvent(after: 4) { seen.append($0.position); return seen.count < 3 }
        #expect(seen == [5, 6, 7])
    }

    @Test("an empty payload is stored and read back as empty")
    func emptyPayload() async throws {
        let fixture = try StoreFixture()
        _ = try await fixture.store.append(AppendBatch(events: [event("s", payload: "")]))
        var payloads: [[UInt8]] = []
        try fixture.store.forEachEvent(after: 0) { payloads.append($0.payload); return true }
        #expect(payloads == [[]])
        #expect(try fixture.store.verify().ok)
    }

    @Test("stats count events, streams and compression")
    func stats() async throws {
        let fixture = try StoreFixture()
        _ = try await fixture.store.append(AppendBatch(events: [event("a"), event("b"), event("a")]))
        let stats = try fixture.store.stats()
        #expect(stats.events == 3)
        #expect(stats.streams == 2)
        #expect(stats.payloadBytes == 21)
        #expect(stats.fileBytes > 0)
    }
}
