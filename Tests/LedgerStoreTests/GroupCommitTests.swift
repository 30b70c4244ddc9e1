import Foundation
import GRDB
import LedgerStore
import Testing

/// Counts projected events into a table of its own, and fails on a chosen event type.
struct CountingProjector: InlineProjector {
    func apply(_ events: ArraySlice<RecordedEvent>, inputs: [ProjectorInput], db: Database) throws {
        try db.execute(sql: "CREATE TABLE IF NOT EXISTS projected (position INTEGER PRIMARY KEY)")
        for event in events {
            if event.type == "poison" { throw StoreError(.invalidEvent, "poison at \(event.position)") }
            try db.execute(sql: "INSERT INTO projected(position) VALUES (?)", arguments: [event.position])
        }
    }
}

@Suite("Group commit")
struct GroupCommitTests {
    /// A store whose projector counts what it saw (`CountingProjector`).
    static func countingFixture() throws -> StoreFixture {
        var configuration = StoreFixture.fastConfiguration
        configuration.projector = CountingProjector()
        return try StoreFixture(configuration: configuration)
    }

    @Test("many concurrent appenders: positions gapless, versions contiguous per stream, nothing lost")
    func concurrentAppenders() async throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let tasks = 64
        let batchesPerTask = 20
        let results = try await withThrowingTaskGroup(of: [(NewEvent, Int64)].self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var mine: [(NewEvent, Int64)] = []
                    for round in 0..<batchesPerTask {
                        let events = (0..<(1 + (task + round) % 5)).map { _ in event("s\((task + round) % 7)") }
                        let result = try await store.append(AppendBatch(events: events))
                        mine += zip(events, result.positions).map { ($0, $1) }
                    }
                    return mine
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let last = try store.lastPosition()
        #expect(Int(last) == results.count)
        #expect(Set(results.map(\.1)) == Set(1...last))
        var versions: [String: [Int64]] = [:]
        try store.forEachEvent(after: 0) { recorded in
            versions[recorded.stream, default: []].append(recorded.version)
            return true
        }
        for (_, list) in versions { #expect(list == Array(1...Int64(list.count))) }
        try await store.pool.read { (db) throws in
            for (original, position) in results.prefix(50) {
                #expect(try store.event(in: db, id: original.id)?.position == position)
            }
        }
        #expect(try store.verify().ok)
    }

    @Test("a failing batch among concurrent ones fails alone; the projector saw exactly the kept events")
    func failingBatchIsolated() async throws {
        let fixture = try Self.countingFixture()
        let store = fixture.store
        let failures = try await withThrowingTaskGroup(of: Bool.self) { group in
            for task in 0..<40 {
                group.addTask {
                    let type = task % 4 == 0 ? "poison" : "update"
                    do {
                        _ = try await store.append(AppendBatch(events: [event("p\(task)"), event("p\(task)", type)]))
                        return false
                    } catch {
                        return true
                    }
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(failures == 10)
        #expect(try store.lastPosition() == 60)
        let projected = try await store.pool.read { (db) throws in try Int.fetchOne(db, sql: "SELECT count(*) FROM projected") }
        #expect(projected == 60)
        #expect(try store.verify().ok)
    }

    /// A group first runs without savepoints and, when a batch is refused, runs again with one per batch. The
    /// attempt that was rolled back may have trained and installed a dictionary: the events the group keeps must
    /// not name it (the writer reloads its state from the file before running the group again).
    @Test("groups with a refused batch run again; dictionaries trained in a rolled-back attempt are not used")
    func refusedGroupsWithTraining() async throws {
        var configuration = StoreFixture.fastConfiguration
        configuration.projector = CountingProjector()
        configuration.firstDictionaryAfter = 64
        configuration.retrainEvery = 64
        configuration.trainsInBackground = false
        let fixture = try StoreFixture(configuration: configuration)
        let store = fixture.store
        let kept = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<48 {
                group.addTask {
                    var kept = 0
                    for round in 0..<12 {
                        let poisoned = (task + round) % 5 == 0
                        let events = (0..<4).map { index in
                            event(
                                "g\(task % 6)", poisoned && index == 3 ? "poison" : "update",
                                payload: #"{"courier":"Sofia \#(task)","eta":\#(round * 7 + index),"status":"on the way"}"#)
                        }
                        if (try? await store.append(AppendBatch(events: events))) != nil { kept += events.count }
                    }
                    return kept
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(try store.lastPosition() == Int64(kept))
        var read = 0
        try store.forEachEvent(after: 0) { _ in
            read += 1
            return true
        }
        #expect(read == kept)
        let dictionaries = try await store.pool.read { (db) throws in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM dictionaries") ?? 0
        }
        #expect(dictionaries > 0)
        #expect(try store.verify().ok)
    }
}
