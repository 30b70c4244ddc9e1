import ActivityModel
import Foundation
import GRDB
import LedgerStore

/// One stored event, decoded, with what the log knows about it.
public struct LoggedEvent: Sendable, Hashable {
    public var position: Int64
    public var version: Int64
    public var recordedAt: Instant
    public var hash: [UInt8]
    public var event: LedgerEvent

    public var positioned: PositionedEvent { PositionedEvent(position: position, event: event) }

    /// The interchange object of SPEC §2 plus where the log keeps it: `position`, `version`, `recordedAt`, `hash`.
    public var json: JSONValue {
        guard case .object(var object) = EventCodec.json(event) else { return EventCodec.json(event) }
        object.members += [
            .init(key: "position", value: .int(position)), .init(key: "version", value: .int(version)),
            .init(key: "recordedAt", value: .string(recordedAt.rfc3339)),
            .init(key: "hash", value: .string(TimelineStep.hex(hash))),
        ]
        return .object(object)
    }
}

extension Ledger {
    /// Every event that bears on `activity`: its own stream, plus the channel streams it is subscribed to
    /// (read through the stream index, never a scan of the log).
    func relevantEvents(_ db: Database, activity: String) throws -> [LoggedEvent] {
        var recorded = try store.events(in: db, stream: "activity:" + activity)
        let channels = try String.fetchAll(
            db.cachedStatement(sql: "SELECT channel FROM channel_members WHERE activity = ? ORDER BY channel"),
            arguments: [activity]
        )
        for channel in channels {
            recorded += try store.events(in: db, stream: "channel:" + channel)
        }
        return try recorded.map(Self.logged)
    }

    /// What `ActivityFold.state` needs as of `asOf`: the events of `relevantEvents` with `at` ≤ asOf, decoded
    /// straight to `PositionedEvent` (later rows are neither decompressed nor decoded, nothing else is kept).
    func foldInput(_ db: Database, activity: String, asOf: Instant) throws -> [PositionedEvent] {
        var recorded = try store.events(in: db, stream: "activity:" + activity, atMost: asOf.milliseconds)
        let channels = try String.fetchAll(
            db.cachedStatement(sql: "SELECT channel FROM channel_members WHERE activity = ? ORDER BY channel"),
            arguments: [activity]
        )
        for channel in channels {
            recorded += try store.events(in: db, stream: "channel:" + channel, atMost: asOf.milliseconds)
        }
        return try recorded.map { PositionedEvent(position: $0.position, event: try ActivityProjector.decode($0)) }
    }

    static func logged(_ recorded: RecordedEvent) throws -> LoggedEvent {
        LoggedEvent(
            position: recorded.position, version: recorded.version,
            recordedAt: Instant(milliseconds: recorded.recordedAt), hash: recorded.hash,
            event: try ActivityProjector.decode(recorded)
        )
    }

    /// The event with this id, or a notFound error naming it.
    public func event(id: String) throws -> LoggedEvent {
        try store.pool.read { db in
            guard let recorded = try store.event(in: db, id: id) else {
                throw LedgerError(.notFound, "no event with id \(id)", field: "id")
            }
            return try Self.logged(recorded)
        }
    }

    /// The app that owns a stream (`activity:X`), if any app wrote it.
    public func owner(ofStream stream: String) throws -> String? {
        try store.pool.read { db in try StreamOwners.owner(of: stream, db) }
    }

    static func now() -> Instant {
        Instant(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
    }
}
