import Foundation
import GRDB
import LedgerStore
import Logging
import Testing

/// The writer no longer checkpoints on its own (`WALCheckpointer`): these hold the background checkpoints to
/// keeping the WAL small under a steady stream of appends, without losing anything.
@Suite("WAL checkpoints")
struct CheckpointTests {
    /// Appends `tasks × rounds` batches of 20 random-id events concurrently; returns how many were written.
    private static func load(_ store: EventStore, tasks: Int = 8, rounds: Int = 60) async throws -> Int {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    for round in 0..<rounds {
                        let payload = #"{"n":\#(round),"text":"\#(UUID().uuidString)"}"#
                        let events = (0..<20).map { _ in event("s\((task * rounds + round) % 50)", payload: payload) }
                        _ = try await store.append(AppendBatch(events: events))
                    }
                    return rounds * 20
                }
            }
            return try await group.reduce(0, +)
        }
    }

    private static func walBytes(_ fixture: StoreFixture) -> Int {
        let attributes = try? FileManager.default.attributesOfItem(atPath: fixture.path + "-wal")
        return (attributes?[.size] as? Int) ?? 0
    }

    /// SQLite folds the WAL into the file and removes it when the last connection closes; a background checkpoint
    /// still running kept the store's own connections from being the last, and a CLI import of 300k events exited
    /// then with a 4 KiB file beside a 76 MB `-wal` holding every commit.
    @Test("a store going away while its background checkpoint runs leaves one file: the WAL folded in and removed")
    func goingAwayFoldsTheWAL() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ledgerstore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ledger.sqlite").path
        var configuration = StoreConfiguration()  // synchronous=FULL: each checkpoint also syncs the file
        configuration.checkpointFrames = 64
        configuration.checkpointCatchUpFrames = 0
        configuration.checkpointLimitFrames = .max
        let count = 20_000
        var store: EventStore? = try EventStore(
            path: path, configuration: configuration, logger: Logger(label: "test"))
        // One commit of a few MB of WAL: it asks for a background checkpoint, and the store goes away at once, as a
        // CLI process ends after its last append: released here, on this thread, once nothing else holds it.
        let events = (0..<count).map { index in
            event("s\(index % 50)", payload: #"{"n":\#(index),"pad":"\#(UUID())"}"#)
        }
        _ = try await store!.append(AppendBatch(events: events))
        let started = Date()
        while !isKnownUniquelyReferenced(&store), Date().timeIntervalSince(started) < 10 {
            try await Task.sleep(for: .milliseconds(1))
        }
        store = nil
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "a -wal is left beside the file")
        // The file alone holds every event.
        let reopened = try EventStore(path: path, configuration: configuration, logger: Logger(label: "test"))
        #expect(try reopened.lastPosition() == Int64(count))
        #expect(try reopened.verify().ok)
    }

    @Test("with no limit on the writer, background checkpoints alone keep the WAL started over")
    func backgroundKeepsWALSmall() async throws {
        var configuration = StoreFixture.fastConfiguration
        configuration.checkpointFrames = 64
        configuration.checkpointCatchUpFrames = 32
        configuration.checkpointLimitFrames = .max
        let fixture = try StoreFixture(configuration: configuration)
        let written = try await Self.load(fixture.store)
        // Every commit's frames stay in the WAL until a checkpoint copies them all; without one the file grows with
        // the log (several MB here), with one it is reused from its start once it passed ~64 frames.
        let frames = try await fixture.store.pool.writeWithoutTransaction { db in
            try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")?[1] as Int? ?? -1
        }
        #expect(Self.walBytes(fixture) < 2_000_000, "WAL of \(Self.walBytes(fixture)) bytes after \(written) events")
        #expect(frames < 500, "the WAL held \(frames) frames")
        #expect(try fixture.store.lastPosition() == Int64(written))
        #expect(try fixture.store.verify().ok)
    }

    @Test("at the limit the writer checkpoints itself; a reopened store reads every event and verifies")
    func writerLimitAndReopen() async throws {
        var configuration = StoreConfiguration()  // synchronous=FULL, as the service runs
        configuration.checkpointFrames = 32
        configuration.checkpointCatchUpFrames = 0
        configuration.checkpointLimitFrames = 48
        let fixture = try StoreFixture(configuration: configuration)
        let written = try await Self.load(fixture.store, tasks: 4, rounds: 30)
        #expect(Self.walBytes(fixture) < 2_000_000)
        let reopened = try fixture.reopen()
        #expect(try await reopened.lastPosition() == Int64(written))
        var count = 0
        try reopened.forEachEvent(after: 0) { _ in
            count += 1
            return true
        }
        #expect(count == written)
        #expect(try await reopened.verify().ok)
    }
}
