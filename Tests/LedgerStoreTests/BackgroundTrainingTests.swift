import Foundation
import GRDB
import LedgerStore
import LedgerTesting
import Testing

/// Dictionaries trained beside the writer (`StoreConfiguration.trainsInBackground`, the default).
@Suite("Dictionary training beside the writer")
struct BackgroundTrainingTests {
    /// Appends `corpus` in batches of 50, one transaction each, until one batch was written after a dictionary
    /// came into the file, or the corpus runs out. While no dictionary is in, it pauses 50 ms after each batch, so
    /// zstd (on a thread of its own) has at least the corpus' 120 batches × 50 ms to train however loaded the
    /// machine is. There is no wall-clock deadline: in `make test` the storage suites' blocking SQLite work holds
    /// Swift's cooperative pool (two threads here) for tens of seconds at a time, and an `await` of this loop
    /// outlasted a 60 s deadline in a fresh-clone CI run ("no dictionary after 50 events").
    private func appendUntilTrained(_ store: EventStore, _ corpus: [CorpusEvent]) async throws -> Int {
        var appended = 0
        var trained = false
        while appended < corpus.count, !trained {
            trained = try store.stats().dictionaries.count >= 1
            let events = corpus[appended..<min(corpus.count, appended + 50)].map {
                NewEvent(id: $0.id, stream: $0.stream, type: $0.type, at: $0.at, payload: $0.payload)
            }
            _ = try await store.append(AppendBatch(events: events))
            appended += events.count
            if !trained { try await Task.sleep(for: .milliseconds(50)) }
        }
        return appended
    }

    /// A store that trains its first dictionary after 500 events (and never again), and a corpus of 6,000.
    private func trainingStore(seed: UInt64) throws -> (StoreFixture, [CorpusEvent]) {
        var configuration = StoreFixture.fastConfiguration
        configuration.firstDictionaryAfter = 500
        configuration.retrainEvery = 0
        return (try StoreFixture(configuration: configuration),
                Array(CorpusGenerator(seed: seed, activities: 600, eventsPerActivity: 10)))
    }

    /// Every payload reads back in order, and the chain verifies.
    private func expectReadBack(_ store: EventStore, _ corpus: ArraySlice<CorpusEvent>) throws {
        var read: [[UInt8]] = []
        try store.forEachEvent(after: 0) { read.append($0.payload); return true }
        #expect(read == corpus.map(\.payload))
        #expect(try store.verify().ok)
    }

    @Test("appends go on while zstd trains; the dictionary is used from the row after the batch that installs it")
    func installedBetweenLaterBatches() async throws {
        let (fixture, corpus) = try trainingStore(seed: 11)
        let appended = try await appendUntilTrained(fixture.store, corpus)
        let dictionaries = try fixture.store.stats().dictionaries
        try #require(dictionaries.count == 1, "no dictionary after \(appended) events")
        let (first, firstUser, unnamedAfter) = try await fixture.store.pool.read { (db) throws in
            (
                try Int64.fetchOne(db, sql: "SELECT first_position FROM dictionaries") ?? -1,
                try Int64.fetchOne(db, sql: "SELECT min(position) FROM events WHERE dictionary IS NOT NULL") ?? -1,
                try Int64.fetchOne(
                    db, sql: "SELECT count(*) FROM events WHERE dictionary IS NULL AND position >= "
                        + "(SELECT first_position FROM dictionaries)") ?? -1
            )
        }
        // Training became due after the batch ending at 500; inside the writer the dictionary would compress
        // position 501 on. Beside it, batch 501–550 (at least) is written while zstd works, and the dictionary
        // comes in between two later batches.
        #expect(first > 501)
        #expect((first - 1) % 50 == 0, "installed inside a batch, at \(first)")
        #expect(firstUser == first)
        #expect(unnamedAfter == 0)
        try expectReadBack(fixture.store, corpus.prefix(appended))
    }

    @Test("a transaction rolled back while zstd trains leaves a store that appends and trains as before")
    func rollbackDropsTheJob() async throws {
        let (fixture, corpus) = try trainingStore(seed: 12)
        func batch(_ range: Range<Int>) -> AppendBatch {
            AppendBatch(events: corpus[range].map {
                NewEvent(id: $0.id, stream: $0.stream, type: $0.type, at: $0.at, payload: $0.payload)
            })
        }
        for chunk in stride(from: 0, to: 500, by: 50) { _ = try await fixture.store.append(batch(chunk..<chunk + 50)) }
        // Training is due and in flight now. An import that fails rolls back and resets the writer.
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await fixture.store.importTransaction { session in
                _ = try session.append(batch(500..<550))
                throw Refused()
            }
        }
        let appended = 500 + (try await appendUntilTrained(fixture.store, Array(corpus[500...])))
        #expect(try fixture.store.stats().dictionaries.count == 1)
        try expectReadBack(fixture.store, corpus.prefix(appended))
    }
}
