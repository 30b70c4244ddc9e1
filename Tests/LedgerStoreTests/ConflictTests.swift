import Foundation
import GRDB
import LedgerStore
import Testing

@Suite("Expected versions and idempotency")
struct ConflictTests {
    @Test("a wrong expected version fails with stream, expected and actual, and writes nothing of the batch")
    func versionConflict() async throws {
        let fixture = try StoreFixture()
        _ = try await fixture.store.append(AppendBatch(events: [event("a"), event("a")]))
        let batch = AppendBatch(events: [event("b"), event("a")], expected: ["a": .exact(1)])
        let error = await #expect(throws: StoreError.self) { try await fixture.store.append(batch) }
        #expect(error?.code == .versionConflict)
        #expect(error?.stream == "a")
        #expect(error?.actualVersion == 2)
        #expect(error?.description.contains("expected version 1 but is at version 2") == true)
        #expect(try fixture.store.lastPosition() == 2)
        try await fixture.store.pool.read { (db) throws in #expect(try fixture.store.streamVersion(in: db, stream: "b") == nil) }
    }

    @Test("noStream and exact versions accept the right state")
    func versionsAccepted() async throws {
        let fixture = try StoreFixture()
        _ = try await fixture.store.append(AppendBatch(events: [event("a")], expected: ["a": .noStream]))
        _ = try await fixture.store.append(AppendBatch(events: [event("a")], expected: ["a": .exact(1)]))
        await #expect(throws: StoreError.self) {
            try await fixture.store.append(AppendBatch(events: [event("a")], expected: ["a": .noStream]))
        }
        #expect(try fixture.store.lastPosition() == 2)
    }

    @Test("a re-sent id returns its original position and writes nothing")
    func idempotent() async throws {
        let fixture = try StoreFixture()
        let first = event("a", id: "one")
        _ = try await fixture.store.append(AppendBatch(events: [event("a"), first]))
        let again = try await fixture.store.append(AppendBatch(events: [event("b"), first, first]))
        #expect(again.positions == [3, 2, 2])
        #expect(again.duplicate == [false, true, true])
        #expect(try fixture.store.lastPosition() == 3)
        #expect(try fixture.store.verify().ok)
    }

    @Test("a retried batch with an expected version returns its original positions")
    func retriedBatch() async throws {
        let fixture = try StoreFixture()
        let batch = AppendBatch(events: [event("a"), event("a")], expected: ["a": .noStream])
        let first = try await fixture.store.append(batch)
        let second = try await fixture.store.append(batch)
        #expect(second.positions == first.positions)
        #expect(second.duplicate == [true, true])
    }

    @Test("the same id with different content is an id conflict naming the id, and nothing is written")
    func idConflict() async throws {
        let fixture = try StoreFixture()
        _ = try await fixture.store.append(AppendBatch(events: [event("a", id: "dup", payload: "1")]))
        let batch = AppendBatch(events: [event("c"), event("a", id: "dup", payload: "2")])
        let error = await #expect(throws: StoreError.self) { try await fixture.store.append(batch) }
        #expect(error?.code == .idConflict)
        #expect(error?.eventID == "dup")
        #expect(try fixture.store.lastPosition() == 1)
        // A batch alone in its transaction is rolled back with it (no savepoint): the next one starts from the
        // tail the refused one found, and the chain holds.
        let next = try await fixture.store.append(
            AppendBatch(events: [event("c"), event("a", id: "dup", payload: "1")]))
        #expect(next.positions == [2, 1])
        #expect(next.duplicate == [false, true])
        #expect(try fixture.store.verify().ok)
    }

    @Test("importTransaction keeps nothing when its body throws, and everything when it returns")
    func importRollback() async throws {
        struct Stop: Error {}
        let fixture = try StoreFixture()
        _ = try await fixture.store.append(AppendBatch(events: [event("a")]))
        await #expect(throws: Stop.self) {
            try await fixture.store.importTransaction { session in
                _ = try session.append(AppendBatch(events: (0..<100).map { _ in event("x") }))
                throw Stop()
            }
        }
        #expect(try fixture.store.lastPosition() == 1)
        let positions = try await fixture.store.importTransaction { session in
            try session.append(AppendBatch(events: [event("x"), event("y")])).positions
        }
        #expect(positions == [2, 3])
        _ = try await fixture.store.append(AppendBatch(events: [event("x")]))
        #expect(try fixture.store.verify().ok)
        #expect(try fixture.store.lastPosition() == 4)
    }

    /// A batch of an import has no savepoint (its sub-journal cost ~10 % of a large import): a refused batch fails
    /// the whole import, even when the body catches the refusal and goes on.
    @Test("a refused batch inside an import fails the import: nothing of it is kept, and the store goes on")
    func importBatchFailure() async throws {
        let fixture = try StoreFixture()
        _ = try await fixture.store.append(AppendBatch(events: [event("a", id: "k")]))
        await #expect(throws: StoreError.self) {
            try await fixture.store.importTransaction { session in
                _ = try session.append(AppendBatch(events: [event("x")]))
                #expect(session.lastPosition == 2)
                let refused = #expect(throws: StoreError.self) {
                    try session.append(AppendBatch(events: [event("new"), event("b", id: "k")]))
                }
                #expect(refused?.code == .idConflict)
                // The refused batch's first event is in the transaction; the session's tail is before the batch.
                #expect(session.lastPosition == 2)
                #expect(throws: StoreError.self) { try session.append(AppendBatch(events: [event("y")])) }
            }
        }
        try await fixture.store.pool.read { (db) throws in
            #expect(try fixture.store.streamVersion(in: db, stream: "new") == nil)
            #expect(try fixture.store.streamVersion(in: db, stream: "x") == nil)
        }
        #expect(try fixture.store.lastPosition() == 1)
        let next = try await fixture.store.append(AppendBatch(events: [event("new")]))
        #expect(next.positions == [2])
        #expect(try fixture.store.verify().ok)
    }

    @Test("empty ids and streams are refused")
    func invalid() async throws {
        let fixture = try StoreFixture()
        await #expect(throws: StoreError.self) { try await fixture.store.append(AppendBatch(events: [event("a", id: "")])) }
        await #expect(throws: StoreError.self) { try await fixture.store.append(AppendBatch(events: [event("")])) }
    }
}
