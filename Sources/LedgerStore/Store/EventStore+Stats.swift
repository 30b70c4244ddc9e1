import Foundation
import GRDB

extension EventStore {
    /// Counts, sizes and compression figures (reads counters kept by appends; does not scan payloads).
    public func stats() throws -> StoreStats {
        try pool.read { db in
            let events = try lastPosition(in: db)
            let streams = try Int64.fetchOne(db, sql: "SELECT count(*) FROM streams") ?? 0
            let counters = try Dictionary(
                uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT name, value FROM store_counters").map {
                    ($0["name"] as String, $0["value"] as Int64)
                })
            let dictionaries = try Row.fetchAll(
                db, sql: "SELECT id, length(bytes) AS size, first_position, created_at FROM dictionaries ORDER BY id"
            ).map {
                StoreStats.Dictionary(
                    id: $0["id"], bytes: $0["size"], firstPosition: $0["first_position"], createdAt: $0["created_at"])
            }
            var stats = StoreStats(
                events: events, streams: streams, fileBytes: fileBytes(), payloadBytes: counters["payload_bytes"] ?? 0,
                storedPayloadBytes: counters["stored_payload_bytes"] ?? 0, dictionaries: dictionaries)
            stats.sealedEvents = try EventReader.sealedThrough(db)
            stats.segments = try Int64.fetchOne(db, sql: "SELECT count(*) FROM segments") ?? 0
            stats.sealedBytes = counters["sealed_bytes"] ?? 0
            return stats
        }
    }

    /// Bytes of the database file and its WAL.
    func fileBytes() -> Int64 {
        let path = pool.path
        var total: Int64 = 0
        for file in [path, path + "-wal"] {
            if let attributes = try? FileManager.default.attributesOfItem(atPath: file),
                let size = attributes[.size] as? NSNumber
            {
                total += size.int64Value
            }
        }
        return total
    }
}
