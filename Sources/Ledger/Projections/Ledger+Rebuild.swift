import ActivityModel
import Foundation
import GRDB
import LedgerStore

/// What a rebuild did.
public struct RebuildSummary: Sendable, Hashable, Codable {
    public var events: Int64
    public var activities: Int64
    public var seconds: Double
}

extension Ledger {
    /// Rebuilds every projection from the log into shadow tables and swaps them in, all in one transaction:
    /// readers see the old tables until the commit, then the new ones; appends wait for the swap.
    public func rebuild(progress: (@Sendable (Int64, Int64) -> Void)? = nil) async throws -> RebuildSummary {
        let started = Self.now()
        let shadow = ActivityProjector(tables: .shadow)
        let (events, activities) = try await store.pool.write { db -> (Int64, Int64) in
            try Self.createShadowTables(db)
            let last = try store.lastPosition(in: db)
            var chunk: [RecordedEvent] = []
            var decoded: [LedgerEvent] = []
            chunk.reserveCapacity(4096)
            decoded.reserveCapacity(4096)
            var count: Int64 = 0
            // Payloads are decompressed and parsed beside the reading (ScanPipeline); this thread reads and projects.
            try store.forEachEvent(in: db, after: 0, transform: ActivityProjector.decode) { event, parsed in
                chunk.append(event)
                decoded.append(parsed)
                count += 1
                if chunk.count == 4096 {
                    try shadow.apply(chunk, decoded: decoded, db: db)
                    chunk.removeAll(keepingCapacity: true)
                    decoded.removeAll(keepingCapacity: true)
                    progress?(count, last)
                }
                return true
            }
            try shadow.apply(chunk, decoded: decoded, db: db)
            progress?(count, last)
            for (live, mine) in ProjectionTables.shadow.all {
                try db.execute(sql: "DELETE FROM \(live)")
                try db.execute(sql: "INSERT INTO \(live) SELECT * FROM \(mine)")
                try db.execute(sql: "DROP TABLE \(mine)")
            }
            let activities = try Int64.fetchOne(db, sql: "SELECT count(*) FROM activities") ?? 0
            return (count, activities)
        }
        let seconds = Double(Self.now().milliseconds - started.milliseconds) / 1000
        return RebuildSummary(events: events, activities: activities, seconds: seconds)
    }

    /// The projection tables under their shadow names, without indexes (rows are copied into the live tables,
    /// whose indexes stay in place).
    static func createShadowTables(_ db: Database) throws {
        for (_, mine) in ProjectionTables.shadow.all { try db.execute(sql: "DROP TABLE IF EXISTS \(mine)") }
        for (live, mine) in ProjectionTables.shadow.all {
            try db.execute(sql: "CREATE TABLE \(mine) AS SELECT * FROM \(live) WHERE 0")
        }
        // CREATE TABLE AS drops primary keys; the projector's upserts need them.
        try db.execute(sql: """
            CREATE UNIQUE INDEX rebuild_activities_pk ON rebuild_activities(activity);
            CREATE UNIQUE INDEX rebuild_tokens_pk ON rebuild_tokens(token);
            CREATE UNIQUE INDEX rebuild_channel_members_pk ON rebuild_channel_members(channel, activity);
            CREATE INDEX rebuild_channel_members_by_activity ON rebuild_channel_members(activity);
            CREATE UNIQUE INDEX rebuild_start_tokens_pk ON rebuild_start_tokens(installation, token);
            CREATE UNIQUE INDEX rebuild_projection_positions_pk ON rebuild_projection_positions(name);
            """)
    }
}
