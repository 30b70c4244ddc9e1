import Foundation
import GRDB
import LedgerStore
import LedgerTesting
import Testing

@Suite("Hash chain, digests and dictionaries")
struct IntegrityTests {
    private func filled(_ count: Int, configuration: StoreConfiguration = StoreFixture.fastConfiguration) async throws
        -> StoreFixture
    {
        let fixture = try StoreFixture(configuration: configuration)
        let corpus = Array(CorpusGenerator(seed: 5, activities: count / 10, eventsPerActivity: 10))
        for chunk in stride(from: 0, to: corpus.count, by: 50) {
            let events = corpus[chunk..<min(corpus.count, chunk + 50)].map {
                NewEvent(id: $0.id, stream: $0.stream, type: $0.type, at: $0.at, payload: $0.payload)
            }
            _ = try await fixture.store.append(AppendBatch(events: events))
        }
        return fixture
    }

    @Test("changing one byte of one payload with plain SQL makes verify name exactly that position", arguments: [1, 137, 300])
    func tampering(position: Int64) async throws {
        let fixture = try await filled(300)
        #expect(try fixture.store.verify().ok)
        try await fixture.store.pool.write { (db) throws in
            var payload = try #require(
                try Data.fetchOne(db, sql: "SELECT payload FROM events WHERE position = ?", arguments: [position]))
            payload[payload.startIndex + payload.count / 2] ^= 0x01
            try db.execute(sql: "UPDATE events SET payload = ? WHERE position = ?", arguments: [payload, position])
            #expect(db.changesCount == 1)
        }
        let report = try fixture.store.verify()
        #expect(!report.ok)
        #expect(report.firstBadPosition == position)
        #expect(report.checked == position - 1)
    }

    @Test("changing a stored field other than the payload is caught too")
    func tamperingType() async throws {
        let fixture = try await filled(100)
        try await fixture.store.pool.write { (db) throws in
            try db.execute(sql: "UPDATE events SET type = 'end' WHERE position = 42 AND type <> 'end'")
            try db.execute(sql: "UPDATE events SET at = at + 1 WHERE position = 42")
        }
        #expect(try fixture.store.verify().firstBadPosition == 42)
    }

    @Test("a deleted row is named as missing")
    func deletedRow() async throws {
        let fixture = try await filled(100)
        try await fixture.store.pool.write { (db) throws in try db.execute(sql: "DELETE FROM events WHERE position = 50") }
        let report = try fixture.store.verify()
        #expect(report.firstBadPosition == 50)
        #expect(report.reason?.contains("missing") == true)
    }

    @Test("a payload that no longer decompresses is named by verify, in any chunk of the scan", arguments: [5, 700])
    func undecodablePayload(position: Int64) async throws {
        let fixture = try await filled(1_200)
        try await fixture.store.pool.write { (db) throws in
            try db.execute(
                sql: "UPDATE events SET payload = X'28B52FFD2010FFFF' WHERE position = ?", arguments: [position])
        }
        let report = try fixture.store.verify()
        #expect(report.firstBadPosition == position)
        #expect(report.checked == position - 1)
        #expect(report.reason?.contains("does not decode") == true)
    }

    @Test("a deleted row right before an undecodable one is named first, as missing")
    func missingBeforeUndecodable() async throws {
        let fixture = try await filled(1_200)
        try await fixture.store.pool.write { (db) throws in
            try db.execute(sql: "DELETE FROM events WHERE position = 600")
            try db.execute(sql: "UPDATE events SET payload = X'28B52FFD2010FFFF' WHERE position = 601")
        }
        let report = try fixture.store.verify()
        #expect(report.firstBadPosition == 600)
        #expect(report.reason?.contains("missing") == true)
    }

    @Test("a row whose stream name was deleted is named by verify, not skipped")
    func deletedStreamName() async throws {
        let fixture = try await filled(1_200)
        let first = try await fixture.store.pool.write { (db) throws -> Int64 in
            let stream = try #require(try Int64.fetchOne(db, sql: "SELECT stream FROM events WHERE position = 900"))
            try db.execute(sql: "DELETE FROM streams WHERE id = ?", arguments: [stream])
            return try #require(try Int64.fetchOne(db, sql: "SELECT min(position) FROM events WHERE stream = ?", arguments: [stream]))
        }
        let report = try fixture.store.verify()
        #expect(report.firstBadPosition == first)
        #expect(report.reason?.contains("does not decode") == true)
    }

    @Test("a digest parses back from its text and proves the log up to it unchanged")
    func digests() async throws {
        let fixture = try await filled(200)
        let digest = try fixture.store.digest()
        #expect(digest.position == 200)
        #expect(Digest(digest.description) == digest)
        #expect(Digest("12:zz") == nil)
        _ = try await fixture.store.append(AppendBatch(events: [event("later")]))
        #expect(try fixture.store.verify(upTo: digest).ok)
        // The whole chain is checked; the digest is proven along the way.
        #expect(try fixture.store.verify(upTo: digest).checked == 201)
        #expect(try fixture.store.verify(upTo: digest).digestProven == true)
        var forged = digest
        forged.hash[0] ^= 1
        #expect(try fixture.store.verify(upTo: forged).firstBadPosition == 200)
        #expect(try fixture.store.verify(upTo: Digest(position: 500, hash: digest.hash)).ok == false)
    }

    @Test("rows written under three dictionaries all read back, also after reopening")
    func dictionaryRotation() async throws {
        var configuration = StoreFixture.fastConfiguration
        configuration.firstDictionaryAfter = 200
        configuration.trainsInBackground = false
        configuration.retrainEvery = 300
        configuration.dictionarySize = 4_096
        let fixture = try await filled(1_000, configuration: configuration)
        let stats = try fixture.store.stats()
        #expect(stats.dictionaries.count >= 3)
        let reopened = try fixture.reopen()
        let used = try await reopened.pool.read { (db) throws in
            try Int64.fetchAll(db, sql: "SELECT DISTINCT dictionary FROM events WHERE dictionary IS NOT NULL")
        }
        #expect(used.count >= 3)
        let expected = Array(CorpusGenerator(seed: 5, activities: 100, eventsPerActivity: 10)).map(\.payload)
        var read: [[UInt8]] = []
        try reopened.forEachEvent(after: 0) { read.append($0.payload); return true }
        #expect(read == expected)
        #expect(try await reopened.verify().ok)
        #expect(stats.compressionRatio > 2)
    }
}
