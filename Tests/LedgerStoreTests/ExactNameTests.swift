import Foundation
import LedgerStore
import LedgerTesting
import Testing

/// Stream names are the bytes the `streams` table holds. Swift's `String` equality is canonical equivalence, so
/// "café" spelt with U+00E9 and with "e" + U+0301 are equal strings and different names: the writer filed the
/// second event under the first's stream while hashing its own name, and `verify` failed at that position.
@Suite("Names that differ only in their Unicode spelling")
struct ExactNameTests {
    static let composed = "activity:caf\u{E9}"
    static let decomposed = "activity:cafe\u{301}"

    @Test("two spellings of one name in one transaction are two streams, and the chain verifies")
    func twoSpellingsOneBatch() async throws {
        #expect(Self.composed == Self.decomposed)  // what made the writer's dictionary merge them
        let fixture = try StoreFixture()
        let events = [Self.composed, Self.decomposed].enumerated().map { index, stream in
            NewEvent(
                id: "e\(index)", stream: stream, type: "dismiss", at: 1_700_000_000_000 + Int64(index),
                recordedAt: 1_700_000_000_100, payload: Array(#"{"by":"user"}"#.utf8))
        }
        let result = try await fixture.store.append(AppendBatch(events: events))
        #expect(result.positions == [1, 2])
        #expect(result.versions == [1, 1])
        let report = try fixture.store.verify()
        #expect(report.ok, "verify: \(report.reason ?? "")")
        var read: [RecordedEvent] = []
        try fixture.store.forEachEvent(after: 0) { read.append($0); return true }
        #expect(read.map { Array($0.stream.utf8) } == [Array(Self.composed.utf8), Array(Self.decomposed.utf8)])
    }
}
