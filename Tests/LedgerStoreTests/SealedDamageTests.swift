import Foundation
import GRDB
import LedgerStore
import Logging
import Testing

/// SPEC §6: `verify` names the first bad position inside a sealed segment. Each case damages a copy of one sealed
/// file with plain SQL, as a disk or a person could, and reopens it.
@Suite("Damage in a sealed segment")
struct SealedDamageTests {
    static let segmentEvents = 64
    static let streams = 6

    static var configuration: StoreConfiguration {
        var configuration = StoreFixture.fastConfiguration
        configuration.segmentEvents = segmentEvents
        return configuration
    }

    /// Varied text payloads, so blocks hold zstd literals as well as matches.
    static func payload(_ index: Int) -> String {
        let words = ["north", "harbor", "eta", "driver", "minutes", "queue", "stop", "gate", "arrived", "lane"]
        var text = ""
        var seed = UInt64(index) &* 0x9E37_79B9_7F4A_7C15
        for _ in 0..<(3 + index % 9) {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            text += words[Int(seed >> 60) % words.count] + "-\(seed >> 48) "
        }
        return #"{"n":\#(index),"text":"\#(text)"}"#
    }

    /// A file of 700 events over six streams, sealed into 11 segments, and the events as appended.
    struct Sealed {
        let fixture: StoreFixture
        let events: [RecordedEvent]
        let digestBefore: Digest
    }

    static func sealedFile() async throws -> Sealed {
        let fixture = try StoreFixture(configuration: configuration)
        var index = 0
        while index < 700 {
            let batch = (index..<min(700, index + 25)).map { i in
                event("s\(i * 7 % streams)", i % 5 == 0 ? "push" : "update", id: "e\(i)", at: 1_000 + Int64(i * 13 % 97), payload: payload(i))
            }
            _ = try await fixture.store.append(AppendBatch(events: batch))
            index += 25
        }
        let digest = try fixture.store.digest()
        var events: [RecordedEvent] = []
        try fixture.store.forEachEvent(after: 0) { events.append($0); return true }
        let report = try fixture.store.seal()
        #expect(report.events == 700 && report.segments == 11)
        return Sealed(fixture: fixture, events: events, digestBefore: digest)
    }

    /// A copy of the sealed file with `damage` applied through a plain SQLite connection, opened as a store.
    static func damaged(_ sealed: Sealed, _ name: String, _ damage: (Database) throws -> Void) throws -> EventStore {
        let path = sealed.fixture.directory.appendingPathComponent("\(name).sqlite").path
        _ = try sealed.fixture.store.backup(into: path)
        let queue = try DatabaseQueue(path: path)
        try queue.write(damage)
        try queue.close()
        return try EventStore(path: path, configuration: configuration, logger: Logger(label: "test"))
    }

    struct Segment {
        var first: Int64
        var last: Int64
    }

    static func segments(_ store: EventStore) throws -> [Segment] {
        try store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT first_position, last_position FROM segments ORDER BY first_position").map {
                Segment(first: $0[0], last: $0[1])
            }
        }
    }

    @Test("digests taken before sealing, and after a later append, verify across the sealed ranges")
    func digestsAcrossSealing() async throws {
        let sealed = try await Self.sealedFile()
        let store = sealed.fixture.store
        #expect(try store.stats().unsealedEvents == 0)
        #expect(try store.digest() == sealed.digestBefore)
        let full = try store.verify()
        #expect(full.ok && full.checked == 700 && full.lastGood == sealed.digestBefore, "\(full.reason ?? "")")
        #expect(try store.verify(upTo: sealed.digestBefore).ok)
        // Digests inside segments, at their ends and at the first position, all taken from the rows before sealing.
        for position in [1, 64, 65, 300, 640, 641, 699] as [Int64] {
            let digest = Digest(position: position, hash: sealed.events[Int(position) - 1].hash)
            let report = try store.verify(upTo: digest)
            #expect(report.ok && report.checked == 700 && report.digestProven == true, "\(position): \(report.reason ?? "")")
            var wrong = digest
            wrong.hash[0] ^= 1
            let refused = try store.verify(upTo: wrong)
            #expect(!refused.ok && refused.firstBadPosition == position)
        }
        _ = try await store.append(AppendBatch(events: (0..<90).map { event("s9", id: "late\($0)", payload: Self.payload($0)) }))
        let afterAppend = try store.digest()
        #expect(afterAppend.position == 790)
        let more = try store.seal()
        #expect(more.events == 90 && more.sealedThrough == 790)
        for digest in [sealed.digestBefore, afterAppend] {
            let report = try store.verify(upTo: digest)
            #expect(report.ok && report.checked == 790 && report.digestProven == true, "\(digest): \(report.reason ?? "")")
        }
        // Reopened: the digests still verify, read from nothing but the file.
        let reopened = try sealed.fixture.reopen(Self.configuration)
        #expect(try reopened.verify(upTo: afterAppend).ok)
        #expect(try reopened.verify().lastGood == afterAppend)
    }

    /// What `verify` must name after one byte of a block changed, found without `verify`: the block read as a
    /// stream read does (no chain, no check values) and compared with the events as appended.
    enum Expected: Equatable {
        /// The block decodes to the same events.
        case unchanged
        /// Its first event whose content differs.
        case content(Int64)
        /// It does not decompress or decode, or an event's position moved: the segment's first position.
        case undecodable
    }

    static func expected(_ store: EventStore, stream: String, original: [RecordedEvent], segment: Segment) throws
        -> Expected
    {
        let read: [RecordedEvent]
        do {
            read = try store.pool.read { db in try store.events(in: db, stream: stream, atMost: .max) }
        } catch {
            return .undecodable
        }
        guard read.count == original.count else { return .undecodable }
        var changed: [Int64] = []
        for (now, then) in zip(read, original) {
            guard now.position == then.position, now.version == then.version else { return .undecodable }
            if now.id != then.id || now.type != then.type || now.at != then.at || now.recordedAt != then.recordedAt
                || now.payload != then.payload
            {
                changed.append(now.position)
            }
        }
        guard let first = changed.min() else { return .unchanged }
        return .content(first)
    }

    @Test("one flipped byte in a block names its first changed event, or the segment's first position when it no longer decodes")
    func flippedBlockBytes() async throws {
        let sealed = try await Self.sealedFile()
        let store = sealed.fixture.store
        let segments = try Self.segments(store)
        // Blocks of the first, a middle and the last segment.
        let blocks = try await store.pool.read { db in
            try [0, 5, 10].map { index -> (id: Int64, stream: String, bytes: Int, segment: Segment) in
                let row = try #require(try Row.fetchOne(db, sql: """
                    SELECT b.id, s.name, b.data_length FROM segment_blocks b JOIN streams s ON s.id = b.stream
                    WHERE b.segment = ? ORDER BY b.data_length DESC LIMIT 1
                    """, arguments: [segments[index].first]))
                return (row[0], row[1], row[2], segments[index])
            }
        }
        var outcomes: [Expected] = []
        for block in blocks {
            let original = sealed.events.filter { $0.stream == block.stream }
            let offsets = Set([0, 1, 3, 4, 5, 6, block.bytes / 5, block.bytes / 3, block.bytes / 2, block.bytes * 2 / 3,
                block.bytes * 4 / 5, block.bytes - 3, block.bytes - 1]).sorted()
            for offset in offsets {
                let name = "block-\(block.id)-\(offset)"
                let copy = try Self.damaged(sealed, name) { db in
                    try changeBlockBytes(db, block: block.id) { $0[$0.startIndex + offset] ^= 0x20 }
                }
                let expected = try Self.expected(copy, stream: block.stream, original: original, segment: block.segment)
                outcomes.append(expected)
                let report = try copy.verify()
                switch expected {
                case .unchanged:
                    #expect(report.ok, "\(name): the events are unchanged, yet \(report.reason ?? "")")
                case .content(let position):
                    #expect(!report.ok && report.firstBadPosition == position, "\(name): \(report.firstBadPosition.map(String.init) ?? "ok") \(report.reason ?? "")")
                case .undecodable:
                    #expect(!report.ok && report.firstBadPosition == block.segment.first, "\(name): \(report.firstBadPosition.map(String.init) ?? "ok") \(report.reason ?? "")")
                }
                // A digest before the damaged segment is still proven (the log fails after it); the one taken before
                // sealing is not.
                if block.segment.first > 1, !report.ok {
                    let earlier = sealed.events[Int(block.segment.first) - 2]
                    let proven = try copy.verify(upTo: Digest(position: earlier.position, hash: earlier.hash))
                    #expect(proven.digestProven == true && !proven.ok, "\(name)")
                    #expect(try copy.verify(upTo: sealed.digestBefore).digestProven == false, "\(name)")
                }
            }
        }
        // Both kinds of damage occurred, or the test proved less than it claims.
        #expect(outcomes.contains { if case .content = $0 { true } else { false } })
        #expect(outcomes.contains(.undecodable))
    }

    @Test("a flipped check value names exactly its position", arguments: [0, 1, 17, 62, 63])
    func flippedCheckValue(index: Int) async throws {
        let sealed = try await Self.sealedFile()
        let segment = try Self.segments(sealed.fixture.store)[4]
        let width = 2  // bytes of a check value (Schemas/sql/README.md)
        for byte in [0, width - 1] {
            let copy = try Self.damaged(sealed, "check-\(index)-\(byte)") { db in
                var checks = try #require(try Data.fetchOne(
                    db, sql: "SELECT checks FROM segments WHERE first_position = ?", arguments: [segment.first]))
                #expect(checks.count == width * 64)
                checks[checks.startIndex + index * width + byte] ^= 0x01
                try db.execute(sql: "UPDATE segments SET checks = ? WHERE first_position = ?", arguments: [checks, segment.first])
            }
            let report = try copy.verify()
            #expect(!report.ok && report.firstBadPosition == segment.first + Int64(index), "byte \(byte): \(report.firstBadPosition.map(String.init) ?? "ok") \(report.reason ?? "")")
        }
    }

    @Test("a damaged id bucket fails a lookup through it with a storage error naming the bucket, and nothing else")
    func damagedIDBucket() async throws {
        let sealed = try await Self.sealedFile()
        let copy = try Self.damaged(sealed, "bucket") { db in
            try db.execute(sql: "UPDATE sealed_id_buckets SET entries = entries || x'0001ff'")
        }
        let event = sealed.events[100]
        do {
            _ = try await copy.pool.read { db in try copy.event(in: db, id: event.id) }
            Issue.record("a lookup through a damaged bucket answered")
        } catch let error as StoreError {
            #expect(error.message.contains("bucket"), "\(error.message)")
        }
        #expect(try copy.verify().ok)
        let streamEvents = try await copy.pool.read { db in try copy.events(in: db, stream: event.stream, atMost: .max) }
        #expect(streamEvents.map(\.id) == sealed.events.filter { $0.stream == event.stream }.map(\.id))
    }

    @Test("a previous hash that no longer links names the segment's first position; a flipped last hash its last")
    func flippedSegmentHashes() async throws {
        let sealed = try await Self.sealedFile()
        let segments = try Self.segments(sealed.fixture.store)
        for index in [0, 4, 10] {
            let segment = segments[index]
            for (column, expected) in [("previous_hash", segment.first), ("last_hash", segment.last)] {
                for byte in [0, 31] {
                    let copy = try Self.damaged(sealed, "\(column)-\(index)-\(byte)") { db in
                        var hash = try #require(try Data.fetchOne(
                            db, sql: "SELECT \(column) FROM segments WHERE first_position = ?", arguments: [segment.first]))
                        hash[hash.startIndex + byte] ^= 0x80
                        try db.execute(
                            sql: "UPDATE segments SET \(column) = ? WHERE first_position = ?", arguments: [hash, segment.first])
                    }
                    let report = try copy.verify()
                    #expect(
                        !report.ok && report.firstBadPosition == expected,
                        "\(column) of segment \(segment.first): \(report.firstBadPosition.map(String.init) ?? "ok") \(report.reason ?? "")")
                    #expect(try copy.verify(upTo: sealed.digestBefore).ok == false)
                }
            }
        }
    }

    @Test("a segment with a block missing, a block that is not zstd, a block's range outside its segment's bytes, those bytes missing, or a short check column names its first position")
    func undecodableSegments() async throws {
        let sealed = try await Self.sealedFile()
        let segment = try Self.segments(sealed.fixture.store)[7]
        let damages: [(String, String)] = [
            ("missing", "DELETE FROM segment_blocks WHERE id = (SELECT first_block + 1 FROM segments WHERE first_position = ?)"),
            ("garbage", "UPDATE segment_data SET data = zeroblob(length(data)) WHERE segment = ?"),
            ("range", "UPDATE segment_blocks SET data_length = data_length + 1000000 WHERE id = (SELECT first_block + 2 FROM segments WHERE first_position = ?)"),
            ("offset", "UPDATE segment_blocks SET data_offset = -1 WHERE id = (SELECT first_block + 1 FROM segments WHERE first_position = ?)"),
            ("bytes", "DELETE FROM segment_data WHERE segment = ?"),
            ("short", "UPDATE segments SET checks = substr(checks, 1, length(checks) - 1) WHERE first_position = ?"),
        ]
        for (name, sql) in damages {
            let copy = try Self.damaged(sealed, name) { db in try db.execute(sql: sql, arguments: [segment.first]) }
            let report = try copy.verify()
            #expect(!report.ok && report.firstBadPosition == segment.first, "\(name): \(report.reason ?? "")")
            #expect(report.checked == segment.first - 1, "\(name)")
        }
    }
}
