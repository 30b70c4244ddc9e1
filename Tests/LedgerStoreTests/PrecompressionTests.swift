import Foundation
import GRDB
import LedgerStore
import LedgerTesting
import Testing

@Suite("Payloads compressed ahead of the writer")
struct PrecompressionTests {
    static func rotatingConfiguration() -> StoreConfiguration {
        var configuration = StoreFixture.fastConfiguration
        configuration.firstDictionaryAfter = 200
        configuration.trainsInBackground = false
        configuration.retrainEvery = 300
        configuration.dictionarySize = 4_096
        return configuration
    }

    /// Compresses each batch three batches ahead of its append, the way an import's decoding thread runs
    /// ahead of the writer, so batches around every training carry bytes of a dictionary that is no longer
    /// the writer's.
    @Test("bytes compressed under a dictionary replaced meanwhile are compressed again; all rows read back")
    func staleGenerationsAreRecompressed() async throws {
        let fixture = try StoreFixture(configuration: Self.rotatingConfiguration())
        let corpus = Array(CorpusGenerator(seed: 9, activities: 100, eventsPerActivity: 10))
        let precompressor = fixture.store.makePrecompressor()
        let batches = stride(from: 0, to: corpus.count, by: 50).map { Array(corpus[$0..<min(corpus.count, $0 + 50)]) }
        var prepared: [[NewEvent]] = []
        var offered: [[UInt8]] = []
        for (index, batch) in batches.enumerated() {
            prepared.append(
                batch.map {
                    var event = NewEvent(id: $0.id, stream: $0.stream, type: $0.type, at: $0.at, payload: $0.payload)
                    event.precompressed = precompressor.compress(event.payload)
                    offered.append(event.precompressed?.bytes ?? [])
                    return event
                })
            if index >= 3 { _ = try await fixture.store.append(AppendBatch(events: prepared.removeFirst())) }
        }
        for events in prepared { _ = try await fixture.store.append(AppendBatch(events: events)) }

        var read: [[UInt8]] = []
        try fixture.store.forEachEvent(after: 0) { read.append($0.payload); return true }
        #expect(read == corpus.map(\.payload))
        #expect(try fixture.store.verify().ok)
        let stored = try await fixture.store.pool.read { db in
            try Data.fetchAll(db, sql: "SELECT payload FROM events ORDER BY position").map { Array($0) }
        }
        let taken = zip(stored, offered).filter { $0 == $1 }.count
        #expect(try fixture.store.stats().dictionaries.count >= 3)
        // Most rows keep the bytes offered; the ones prepared before a training were compressed again.
        #expect(taken > corpus.count / 2)
        #expect(taken < corpus.count)
    }

    @Test("bytes tagged with a generation the writer never had are ignored")
    func unknownGenerationIgnored() async throws {
        let fixture = try StoreFixture()
        var first = event("s")
        first.precompressed = PrecompressedPayload(generation: 999_999, bytes: [1, 2, 3])
        _ = try await fixture.store.append(AppendBatch(events: [first]))
        let read = try await fixture.store.pool.read { db in try fixture.store.events(in: db, stream: "s") }
        #expect(read.map(\.payload) == [first.payload])
        #expect(try fixture.store.verify().ok)
    }

    @Test("concurrent appenders that compress their own batches across trainings lose nothing")
    func concurrentAppendersPrecompress() async throws {
        let fixture = try StoreFixture(configuration: Self.rotatingConfiguration())
        let corpus = Array(CorpusGenerator(seed: 10, activities: 80, eventsPerActivity: 10))
        let store = fixture.store
        try await withThrowingTaskGroup(of: Void.self) { group in
            for start in stride(from: 0, to: corpus.count, by: 20) {
                let slice = corpus[start..<min(corpus.count, start + 20)].map {
                    NewEvent(id: $0.id, stream: $0.stream, type: $0.type, at: $0.at, payload: $0.payload)
                }
                group.addTask { _ = try await store.append(AppendBatch(events: store.precompressed(slice))) }
            }
            try await group.waitForAll()
        }
        var read: [String: [UInt8]] = [:]
        try store.forEachEvent(after: 0) { read[$0.id] = $0.payload; return true }
        #expect(read.count == corpus.count)
        #expect(corpus.allSatisfy { read[$0.id] == $0.payload })
        #expect(try store.verify().ok)
        #expect(try store.stats().dictionaries.count >= 2)
    }
}
