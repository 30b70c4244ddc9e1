import ActivityModel
import Foundation
import GRDB
import LedgerStore
import Logging

/// What a rebuild did.
public struct RebuildSummary: Sendable, Hashable, Codable {
    public var events: Int64
    public var activities: Int64
    public var seconds: Double
    /// Stored events that did not decode (reported in the log and skipped).
    public var undecodable: Int64 = 0
}

extension Ledger {
    /// Rebuilds every projection from the log in place, in one transaction: readers keep seeing the old rows
    /// (their WAL snapshot) until the commit, then the new ones; appends wait for the transaction.
    public func rebuild(progress: (@Sendable (Int64, Int64) -> Void)? = nil) async throws -> RebuildSummary {
        try await rebuild(progress: progress, quietEvents: Self.rebuildQuietEvents)
    }

    /// `rebuild(progress:)`, writing out the rows of activities with no event of their own among the last
    /// `quietEvents` every `quietEvents` events (tests choose a small one).
    func rebuild(
        progress: (@Sendable (Int64, Int64) -> Void)?, quietEvents: Int64
    ) async throws -> RebuildSummary {
        let started = Self.now()
        if let postgres {
            let (events, activities) = try await postgres.catchUp(projector: projector, fromScratch: true, progress: progress)
            let seconds = Double(Self.now().milliseconds - started.milliseconds) / 1000
            return RebuildSummary(events: events, activities: activities, seconds: seconds)
        }
        let (events, activities, undecodable) = try await store.pool.write { db -> (Int64, Int64, Int64) in
            for table in ProjectionTables.live.names { try db.execute(sql: "DELETE FROM \(table)") }
            let last = try store.lastPosition(in: db)
            var batch = ProjectionBatch(SQLiteProjectionRows(db: db), startsEmpty: true)
            var count: Int64 = 0
            var position: Int64 = 0
            var undecodable: Int64 = 0
            // Payloads are decompressed and decoded beside the reading, each event lent as the bytes it is read
            // into (`forEachEventView`: no event built) straight into what the projection reads
            // (`ProjectionDecoder`); this thread projects. Activity rows stay in memory across the whole scan up
            // to a bound, so most are read never and written once.
            // Each segment's decoding keeps a memo of the last stream (a block lends its events with one name).
            let makeDecode: @Sendable () -> (EventView) -> Result<ProjectionEvent, any Error> = {
                ProjectionDecoder.ViewDecoder().decode
            }
            let decodeBuilt: @Sendable (RecordedEvent) -> Result<ProjectionEvent, any Error> = { recorded in
                Result { try ProjectionDecoder.decode(recorded) }
            }
            try store.forEachEventView(in: db, after: 0, makeTransform: makeDecode, built: decodeBuilt) {
                eventPosition, decoded in
                switch decoded {
                case .success(let decoded):
                    try batch.apply(decoded, position: eventPosition)
                case .failure(let error):
                    // A row only an older version could have let in: reported, skipped, the rest rebuilt.
                    undecodable += 1
                    logger.error("a stored event does not decode; projections skip it", metadata: [
                        "ledger.position": "\(eventPosition)", "ledger.error": "\(error)",
                    ])
                }
                position = eventPosition
                count += 1
                // Rows may keep their content state's payload: bound both the rows and those bytes.
                if batch.pendingRows >= Self.rebuildRowsInMemory || batch.heldBytes >= Self.rebuildHeldBytes {
                    try batch.flush()
                } else if count % quietEvents == 0 {
                    try batch.flush(quietSince: eventPosition - quietEvents)
                }
                if count % 4096 == 0 { progress?(count, last) }
                return true
            }
            try batch.flush()
            if count > 0 { try SQLiteProjectionRows(db: db).savePosition(position) }
            progress?(count, last)
            let activities = try Int64.fetchOne(db, sql: "SELECT count(*) FROM activities") ?? 0
            return (count, activities, undecodable)
        }
        let seconds = Double(Self.now().milliseconds - started.milliseconds) / 1000
        return RebuildSummary(events: events, activities: activities, seconds: seconds, undecodable: undecodable)
    }

    /// Activity rows a rebuild keeps in memory before writing them out (under 1 KB each, plus a payload).
    static let rebuildRowsInMemory = 16_384
    /// Payload bytes the held rows may keep alive before they are written out.
    static let rebuildHeldBytes = 32 << 20
    /// Every this many events a rebuild writes out the rows of activities with no event of their own among the
    /// last this many (`ProjectionBatch.flush(quietSince:)`).
    static let rebuildQuietEvents: Int64 = 8_192
}
