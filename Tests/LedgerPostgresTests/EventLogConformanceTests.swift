import Foundation
import LedgerPostgres
import LedgerStore
import Logging
import PostgresNIO
import Synchronization
import Testing

/// SPEC §6: what the log guarantees, asserted once and run on every backend (`Backend.all`).
@Suite("EventLog conformance (SQLite file and PostgreSQL)")
struct EventLogConformanceTests {
    @Test("appends take gapless positions and per-stream versions; reads by id, stream and position agree", arguments: Backend.all)
    func appendAndRead(backend: Backend) async throws {
        try await backend.withLog { log, _ in
            let first = try await log.append(AppendBatch(events: [
                newEvent("activity:A", id: "a1"), newEvent("activity:B", id: "b1"), newEvent("activity:A", id: "a2"),
            ]))
            #expect(first.positions == [1, 2, 3])
            #expect(first.versions == [1, 1, 2])
            #expect(first.duplicate == [false, false, false])
            let second = try await log.append(AppendBatch(events: [newEvent("activity:B", id: "b2", payload: #"{"é":"ü"}"#)]))
            #expect(second.positions == [4])
            #expect(second.versions == [2])
            #expect(try await log.lastPosition() == 4)

            let b2 = try #require(try await log.event(id: "b2"))
            #expect(b2.position == 4 && b2.stream == "activity:B" && b2.version == 2 && b2.type == "update")
            #expect(b2.payload == Array(#"{"é":"ü"}"#.utf8))
            #expect(b2.at == 1_000 && b2.recordedAt == 2_000 && b2.hash.count == 32)
            #expect(try await log.event(id: "missing") == nil)

            #expect(try await log.events(stream: "activity:A", fromVersion: 1).map(\.id) == ["a1", "a2"])
            #expect(try await log.events(stream: "activity:A", fromVersion: 2).map(\.id) == ["a2"])
            #expect(try await log.events(stream: "activity:none", fromVersion: 1).isEmpty)

            #expect(try await log.events(after: 0, limit: 10).map(\.position) == [1, 2, 3, 4])
            #expect(try await log.events(after: 1, limit: 2).map(\.id) == ["b1", "a2"])
            #expect(try await log.events(after: 4, limit: 10).isEmpty)
            // Every read gives the same event, hash included.
            #expect(try await log.events(after: 3, limit: 1) == [b2])
            #expect(try await log.events(stream: "activity:B", fromVersion: 2) == [b2])
        }
    }

    @Test("expected versions: a mismatch writes nothing; a retried batch returns its original positions", arguments: Backend.all)
    func expectedVersions(backend: Backend) async throws {
        try await backend.withLog { log, _ in
            let batch = AppendBatch(
                events: [newEvent("activity:A", id: "a1"), newEvent("activity:A", id: "a2")],
                expected: ["activity:A": .noStream])
            #expect(try await log.append(batch).positions == [1, 2])
            // The same batch again: already stored identically, so a no-op answering the original positions.
            let retried = try await log.append(batch)
            #expect(retried.positions == [1, 2] && retried.duplicate == [true, true] && retried.versions == [1, 2])

            let stale = AppendBatch(events: [newEvent("activity:A", id: "a3")], expected: ["activity:A": .exact(1)])
            let error = await #expect(throws: StoreError.self) { try await log.append(stale) }
            #expect(error?.code == .versionConflict)
            #expect(error?.actualVersion == 2)

            let right = AppendBatch(events: [newEvent("activity:A", id: "a3")], expected: ["activity:A": .exact(2)])
            #expect(try await log.append(right).versions == [3])
            let any = AppendBatch(events: [newEvent("activity:A", id: "a4")], expected: ["activity:A": .any])
            #expect(try await log.append(any).versions == [4])
            #expect(try await log.lastPosition() == 4)
        }
    }

    /// `expectedVersions` may name a stream the batch writes nothing to (HTTP batches): it is judged on the stored
    /// log like any other, whether this process knows the stream or not (PostgreSQL judged it as new until 17).
    @Test("an expected version on a stream the batch does not write is judged on the stored log", arguments: Backend.all)
    func expectedVersionOfAnotherStream(backend: Backend) async throws {
        try await backend.withLog { log, location in
            _ = try await log.append(AppendBatch(events: [newEvent("activity:B", id: "b1"), newEvent("activity:B", id: "b2")]))
            _ = try await log.append(AppendBatch(events: [newEvent("activity:A", id: "a1")]))
            // Planned on what this process knows (it wrote B) and, through a second log, on a look.
            let other = try await backend.open(location)
            for appender in [log, other] {
                let asNew = AppendBatch(events: [newEvent("activity:A", id: "a-new")], expected: ["activity:B": .noStream])
                let error = await #expect(throws: StoreError.self) { try await appender.append(asNew) }
                #expect(error?.code == .versionConflict && error?.actualVersion == 2)
                let stale = AppendBatch(events: [newEvent("activity:A", id: "a-new")], expected: ["activity:C": .exact(1)])
                let none = await #expect(throws: StoreError.self) { try await appender.append(stale) }
                #expect(none?.code == .versionConflict && none?.actualVersion == 0)
            }
            let right = AppendBatch(events: [newEvent("activity:A", id: "a2")], expected: ["activity:B": .exact(2)])
            #expect(try await other.append(right).versions == [2])
            #expect(try await log.lastPosition() == 4)
            await close(other)
        }
    }

    @Test("a re-sent id is a no-op with the same content and a conflict with other content; a batch is all or nothing", arguments: Backend.all)
    func idempotency(backend: Backend) async throws {
        try await backend.withLog { log, _ in
            _ = try await log.append(AppendBatch(events: [newEvent("activity:A", id: "x")]))
            let again = try await log.append(AppendBatch(events: [newEvent("activity:A", id: "x"), newEvent("activity:A", id: "y")]))
            #expect(again.positions == [1, 2] && again.duplicate == [true, false] && again.versions == [1, 2])

            // The second event conflicts: the first of the batch is not written either.
            let conflicting = AppendBatch(events: [
                newEvent("activity:A", id: "z"), newEvent("activity:A", id: "x", payload: #"{"n":2}"#),
            ])
            let error = await #expect(throws: StoreError.self) { try await log.append(conflicting) }
            #expect(error?.code == .idConflict)
            #expect(try await log.event(id: "z") == nil)
            #expect(try await log.lastPosition() == 2)

            // The same id twice in one batch: the second is the first's duplicate, or a conflict.
            let twice = try await log.append(AppendBatch(events: [newEvent("activity:B", id: "w"), newEvent("activity:B", id: "w")]))
            #expect(twice.positions == [3, 3] && twice.duplicate == [false, true])
            await #expect(throws: StoreError.self) {
                try await log.append(AppendBatch(events: [
                    newEvent("activity:B", id: "v"), newEvent("activity:B", id: "v", at: 5),
                ]))
            }
            #expect(try await log.lastPosition() == 3)
            #expect(try await log.verify(upTo: nil).ok)
        }
    }

    @Test("names of two apps never collide: the same bare id and stream in two namespaces are two events", arguments: Backend.all)
    func namespaces(backend: Backend) async throws {
        try await backend.withLog { log, _ in
            let rides = Namespaced.qualify("activity:R", app: "com.rides")
            let food = Namespaced.qualify("activity:R", app: "com.food")
            _ = try await log.append(AppendBatch(events: [
                newEvent(rides, id: Namespaced.qualify("e1", app: "com.rides")),
                newEvent(food, id: Namespaced.qualify("e1", app: "com.food"), payload: #"{"n":"food"}"#),
            ]))
            #expect(try await log.events(stream: rides, fromVersion: 1).count == 1)
            let foods = try await log.event(id: Namespaced.qualify("e1", app: "com.food"))
            #expect(foods?.payload == Array(#"{"n":"food"}"#.utf8) && foods?.stream == food)
            #expect(try await log.event(id: "e1") == nil)
        }
    }

    @Test("an empty id or stream and a NUL in a name are refused before anything is written", arguments: Backend.all)
    func invalidEvents(backend: Backend) async throws {
        try await backend.withLog { (log: any EventLog, _: Backend.Location) async throws in
            for bad in [newEvent("activity:A", id: ""), newEvent("", id: "e"), newEvent("activity:\u{0}A", id: "e"),
                        newEvent("activity:A", id: "e\u{0}")] {
                let error = await #expect(throws: StoreError.self) {
                    try await log.append(AppendBatch(events: [newEvent("activity:A", id: "ok"), bad]))
                }
                #expect(error?.code == .invalidEvent)
            }
            #expect(try await log.lastPosition() == 0)
        }
    }

    @Test("verify walks the chain; a digest taken earlier proves the log up to it; a wrong digest names its position", arguments: Backend.all)
    func verifyAndDigest(backend: Backend) async throws {
        try await backend.withLog { log, _ in
            #expect(try await log.digest() == Digest(position: 0, hash: [UInt8](repeating: 0, count: 32)))
            #expect(try await log.verify(upTo: nil).ok)
            for index in 0..<30 {
                _ = try await log.append(AppendBatch(events: [newEvent("activity:\(index % 4)", id: "e\(index)")]))
            }
            let digest = try await log.digest()
            #expect(digest.position == 30)
            #expect(try await log.events(after: 29, limit: 1).first?.hash == digest.hash)
            _ = try await log.append(AppendBatch(events: [newEvent("activity:9", id: "later")]))
            // The digest is proven along the way; the whole chain is checked either way.
            let report = try await log.verify(upTo: digest)
            #expect(report.ok && report.checked == 31 && report.lastGood.position == 31)
            let whole = try await log.verify(upTo: nil)
            #expect(whole.ok && whole.checked == 31)

            var wrong = digest
            wrong.hash[0] ^= 1
            let refused = try await log.verify(upTo: wrong)
            #expect(!refused.ok && refused.firstBadPosition == 30)
            let beyond = try await log.verify(upTo: Digest(position: 40, hash: digest.hash))
            #expect(!beyond.ok && beyond.firstBadPosition == 32)
        }
    }

    @Test("the chain is over logical fields: the same appends give the same digest on every backend")
    func sameDigestEverywhere() async throws {
        var digests: [Digest] = []
        for backend in Backend.all {
            digests.append(try await backend.withLog { log, _ in
                for index in 0..<20 {
                    _ = try await log.append(AppendBatch(events: [
                        newEvent("activity:\(index % 3)", id: "e\(index)", at: Int64(index), payload: #"{"i":\#(index)}"#),
                        newEvent(Namespaced.qualify("channel:c", app: "com.a"), id: Namespaced.qualify("c\(index)", app: "com.a")),
                    ]))
                }
                return try await log.digest()
            })
        }
        #expect(digests.count == Backend.all.count)
        #expect(Set(digests).count == 1)
    }

    @Test("appenders on separate connections (as separate processes) interleave into one gapless, valid chain", arguments: Backend.all)
    func concurrentAppenders(backend: Backend) async throws {
        try await backend.withLog { log, location in
            let handles = [log] + (try await [backend.open(location), backend.open(location), backend.open(location)])
            let perHandle = 40
            try await withThrowingTaskGroup(of: [Int64].self) { group in
                for (index, handle) in handles.enumerated() {
                    group.addTask {
                        var positions: [Int64] = []
                        for step in 0..<perHandle {
                            let result = try await handle.append(AppendBatch(events: [
                                newEvent("activity:shared", id: "h\(index)-\(step)"),
                                newEvent("activity:h\(index)", id: "own\(index)-\(step)"),
                            ]))
                            positions += result.positions
                        }
                        return positions
                    }
                }
                var all: [Int64] = []
                for try await positions in group { all += positions }
                #expect(all.sorted() == Array(1...Int64(handles.count * perHandle * 2)))
            }
            let shared = try await log.events(stream: "activity:shared", fromVersion: 1)
            #expect(shared.map(\.version) == Array(1...Int64(handles.count * perHandle)))
            #expect(try await log.verify(upTo: nil).ok)
            for handle in handles.dropFirst() { await close(handle) }
        }
    }
}

/// An event with fixed times, so the same appends hash the same on every backend.
func newEvent(
    _ stream: String, _ type: String = "update", id: String, at: Int64 = 1_000, payload: String = #"{"n":1}"#
) -> NewEvent {
    NewEvent(id: id, stream: stream, type: type, at: at, recordedAt: 2_000, payload: Array(payload.utf8))
}

@Suite("PostgreSQL: one log for several processes", .enabled(if: Backend.all.contains(.postgres)))
struct PostgresNotifyTests {
    @Test("appends that look first and appends that lock first, racing on shared streams, make one gapless chain")
    func optimisticAndLockingAppends() async throws {
        try await Backend.postgres.withLog { log, location in
            // 0: every append takes the head's lock before it looks; 1 and 3: appends look first and write only if
            // the head has not moved, retrying (then locking) when another got there first.
            var handles: [PostgresEventLog] = []
            for attempts in [0, 0, 1, 3, 3] {
                handles.append(try await PostgresEventLog(url: location.text, optimisticAttempts: attempts, logger: quiet))
            }
            let perHandle = 30
            let positions = try await withThrowingTaskGroup(of: [Int64].self) { group in
                for (index, handle) in handles.enumerated() {
                    group.addTask {
                        var positions: [Int64] = []
                        for step in 0..<perHandle {
                            let result = try await handle.append(AppendBatch(
                                events: (0..<3).map { newEvent("activity:shared-\($0)", id: "h\(index)-\(step)-\($0)") }))
                            positions += result.positions
                        }
                        return positions
                    }
                }
                var all: [Int64] = []
                for try await positions in group { all += positions }
                return all
            }
            #expect(positions.sorted() == Array(1...Int64(handles.count * perHandle * 3)))
            for stream in 0..<3 {
                let versions = try await log.events(stream: "activity:shared-\(stream)", fromVersion: 1).map(\.version)
                #expect(versions == Array(1...Int64(handles.count * perHandle)))
            }
            #expect(try await log.verify(upTo: nil).ok)
            #expect(try await log.lastPosition() == Int64(handles.count * perHandle * 3))
            for handle in handles { await handle.close() }
        }
    }

    @Test("after its own append a process appends in one statement; another process's append or an old id makes it look again")
    func appendsAfterItsOwnTail() async throws {
        try await Backend.postgres.withLog { log, location in
            let postgres = try #require(log as? PostgresEventLog)
            let looks = { postgres.looks.load(ordering: .relaxed) }
            _ = try await postgres.append(AppendBatch(events: [newEvent("activity:A", id: "a0"), newEvent("activity:B", id: "b0")]))
            #expect(looks() == 1)
            // Its own tail: no look, however many appends, with right positions and versions.
            for step in 1...10 {
                let result = try await postgres.append(AppendBatch(events: [newEvent("activity:A", id: "a\(step)")]))
                #expect(result.positions == [Int64(step + 2)] && result.versions == [Int64(step + 1)])
            }
            #expect(looks() == 1)
            // An id stored long ago: the write is refused by the unique id index, then the look finds it.
            let resent = try await postgres.append(AppendBatch(events: [newEvent("activity:A", id: "a0"), newEvent("activity:A", id: "a11")]))
            #expect(resent.positions == [1, 13] && resent.duplicate == [true, false])
            #expect(looks() == 2)
            // A conflict is judged on a look, never on the tail alone.
            await #expect(throws: StoreError.self) {
                try await postgres.append(AppendBatch(events: [newEvent("activity:A", id: "x")], expected: ["activity:A": .exact(3)]))
            }
            #expect(looks() == 3)
            // Another process appends: the head check fails, this one looks, and the chain stays whole.
            let other = try await Backend.postgres.open(location)
            _ = try await other.append(AppendBatch(events: [newEvent("activity:A", id: "other")]))
            let after = try await postgres.append(AppendBatch(events: [newEvent("activity:A", id: "a12")]))
            #expect(after.positions == [15] && after.versions == [14])
            #expect(looks() == 4)
            // A stream it never saw needs a look too.
            _ = try await postgres.append(AppendBatch(events: [newEvent("activity:C", id: "c0")]))
            #expect(looks() == 5)
            #expect(try await log.verify(upTo: nil).ok)
            await close(other)
        }
    }

    @Test("a waiter on one connection pool wakes for another pool's append, at once, and times out without one")
    func waitForAppend() async throws {
        try await Backend.postgres.withLog { log, location in
            let postgres = try #require(log as? PostgresEventLog)
            let other = try await Backend.postgres.open(location)
            _ = try await other.append(AppendBatch(events: [newEvent("activity:A", id: "first")]))
            // Already past: answers without waiting.
            let clock = ContinuousClock()
            let immediate = clock.now
            #expect(try await postgres.waitForAppend(after: 0, timeout: .seconds(30)) == 1)
            // Far below the 30 s a wait would take; 1 s was outlasted (1.23 s) on a loaded 2-core machine.
            #expect(clock.now - immediate < .seconds(10))
            // Nothing new: waits the timeout and answers the same position.
            let idle = clock.now
            #expect(try await postgres.waitForAppend(after: 1, timeout: .milliseconds(300)) == 1)
            #expect(clock.now - idle >= .milliseconds(250))
            // Another pool appends while this one waits: woken by its notification, well before the timeout.
            let started = clock.now
            async let woken = postgres.waitForAppend(after: 1, timeout: .seconds(20))
            try await Task.sleep(for: .milliseconds(300))
            _ = try await other.append(AppendBatch(events: [newEvent("activity:A", id: "second"), newEvent("activity:B", id: "third")]))
            #expect(try await woken == 3)
            #expect(clock.now - started < .seconds(5))
            await close(other)
        }
    }
}
