import Foundation
import GRDB
import LedgerStore
import Logging

/// A store in a fresh temporary directory, removed when the fixture goes away.
final class StoreFixture: Sendable {
    let directory: URL
    let path: String
    let store: EventStore

    init(configuration: StoreConfiguration = StoreFixture.fastConfiguration) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledgerstore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("ledger.sqlite").path
        store = try EventStore(path: path, configuration: configuration, logger: Logger(label: "test"))
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// Durability off keeps the suite quick; the crash test uses the default (full).
    static var fastConfiguration: StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.durability = .off
        return configuration
    }

    func reopen(_ configuration: StoreConfiguration = StoreFixture.fastConfiguration) throws -> EventStore {
        try EventStore(path: path, configuration: configuration, logger: Logger(label: "test"))
    }
}

func event(
    _ stream: String, _ type: String = "update", id: String = UUID().uuidString.lowercased(), at: Int64 = 1_000,
    payload: String = #"{"n":1}"#
) -> NewEvent {
    NewEvent(id: id, stream: stream, type: type, at: at, recordedAt: 2_000, payload: Array(payload.utf8))
}

extension StoreFixture {
    /// Scans the whole log and counts how many events the body saw before asking to stop after `wanted`.
    func eventsSeen(stoppingAfter wanted: Int) throws -> Int {
        var seen = 0
        try store.forEachEvent(after: 0) { _ in
            seen += 1
            return seen < wanted
        }
        return seen
    }

    /// Replaces the payload at `position` by a zstd frame that does not decompress, scans the whole log, and
    /// returns the positions the body saw and the error the scan threw.
    func scanWithCorruptPayload(at position: Int64) async throws -> (seen: [Int64], error: StoreError?) {
        try await store.pool.write { (db) throws in
            try db.execute(
                sql: "UPDATE events SET payload = ? WHERE position = ?",
                arguments: [Data([0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x10, 0xff, 0xff]), position])
        }
        var seen: [Int64] = []
        do {
            try store.forEachEvent(after: 0) { seen.append($0.position); return true }
            return (seen, nil)
        } catch let error as StoreError {
            return (seen, error)
        }
    }
}

/// Damage to a sealed block: `change` gets the block's stored bytes and may alter them in place (keeping their
/// count); they are written back where they live — the block's range of its segment's `segment_data` blob, or
/// `segment_blocks.data` for a block sealed in 002's layout.
func changeBlockBytes(_ db: Database, block: Int64, _ change: (inout Data) -> Void) throws {
    guard let row = try Row.fetchOne(
        db, sql: "SELECT segment, data_offset, data_length, data FROM segment_blocks WHERE id = ?", arguments: [block])
    else { throw StoreError(.schema, "no block \(block)") }
    let segment: Int64 = row[0]
    guard let offset = row[1] as Int?, let length = row[2] as Int? else {
        var data: Data = row[3]
        change(&data)
        try db.execute(sql: "UPDATE segment_blocks SET data = ? WHERE id = ?", arguments: [data, block])
        return
    }
    var packed = try Data.fetchOne(db, sql: "SELECT data FROM segment_data WHERE segment = ?", arguments: [segment]) ?? Data()
    let start = packed.startIndex + offset
    var bytes = Data(packed[start..<(start + length)])
    change(&bytes)
    precondition(bytes.count == length, "changeBlockBytes keeps the block's length")
    packed.replaceSubrange(start..<(start + length), with: bytes)
    try db.execute(sql: "UPDATE segment_data SET data = ? WHERE segment = ?", arguments: [packed, segment])
}

/// A zstd frame header followed by bytes that are no zstd block: written over a block's first bytes, it no longer
/// decompresses.
let notZstd: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x10, 0xff, 0xff]
