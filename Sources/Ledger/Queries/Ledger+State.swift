import ActivityModel
import Foundation
import GRDB
import LedgerStore

extension Ledger {
    /// SPEC §3: the activity as of `at` (default now), folded from its events.
    /// - Throws: notFound "no such activity at T" when it has no request at or before T.
    /// `app` is the namespace (nil: the app-less one of plain CLI imports).
    public func state(activity: String, at: Instant? = nil, app: String? = nil) async throws -> ActivityState {
        let asOf = at ?? Self.now()
        return try await read { db in try self.state(db, activity: activity, asOf: asOf, app: app) }
    }

    /// SPEC §4: the verdict of every update or end that reached the activity, as of `at` (default now).
    public func audit(activity: String, at: Instant? = nil, app: String? = nil) async throws -> ActivityAudit {
        let asOf = at ?? Self.now()
        return try await read { db in try self.audit(db, activity: activity, asOf: asOf, app: app) }
    }

    /// The verdicts of one update or end on every activity it reached (one per subscriber for a channel update).
    public func audit(update id: String, at: Instant? = nil, app: String? = nil) async throws -> UpdateAudit {
        let asOf = at ?? Self.now()
        return try await read { db in try self.audit(db, update: id, asOf: asOf, app: app) }
    }

    /// `state` inside a read the caller holds (the bench times the read and fold alone with it).
    package func state(_ db: Database, activity: String, asOf: Instant, app: String?) throws -> ActivityState {
        let events = try foldInput(db, key: Self.key(activity, app: app), asOf: asOf)
        do {
            return try ActivityFold.state(activity: activity, events: events, asOf: asOf)
        } catch {
            throw LedgerError(.notFound, "no such activity at \(asOf.rfc3339): \(activity)", field: "activity")
        }
    }

    func audit(_ db: Database, activity: String, asOf: Instant, app: String?) throws -> ActivityAudit {
        let events = try foldInput(db, key: Self.key(activity, app: app), asOf: asOf)
        do {
            let deliveries = try DeliveryVerdicts.deliveries(activity: activity, events: events, asOf: asOf)
            return ActivityAudit(activity: activity, asOf: asOf, deliveries: deliveries)
        } catch {
            throw LedgerError(.notFound, "no such activity at \(asOf.rfc3339): \(activity)", field: "activity")
        }
    }

    func audit(_ db: Database, update id: String, asOf: Instant, app: String?) throws -> UpdateAudit {
        let target = try event(db, id: id, app: app)
        guard target.event.type == .update || target.event.type == .end else {
            throw LedgerError(.badInput, "event \(id) is a \(target.event.type.rawValue), not an update or end", field: "event")
        }
        let activities: [String]
        switch target.event.stream.kind {
        case .activity:
            activities = [target.event.stream.id]
        case .channel:
            activities = try String.fetchAll(
                db, sql: "SELECT activity FROM channel_members WHERE channel = ? ORDER BY activity",
                arguments: [Self.key(target.event.stream.id, app: app)]
            ).map(Namespaced.name)
        case .installation:
            activities = []
        }
        var deliveries: [Delivery] = []
        for activity in activities {
            guard let audit = try? audit(db, activity: activity, asOf: asOf, app: app) else { continue }
            deliveries += audit.deliveries.filter { $0.event == id }
        }
        return UpdateAudit(event: id, type: target.event.type, stream: target.event.stream.description, deliveries: deliveries)
    }
}

/// `audit <activity>`: SPEC §7 `{"activity", "deliveries": [...]}`.
public struct ActivityAudit: Sendable, Hashable {
    public var activity: String
    public var asOf: Instant
    public var deliveries: [Delivery]

    public var json: JSONValue {
        .object([
            "activity": .string(activity), "asOf": .string(asOf.rfc3339),
            "deliveries": .array(deliveries.map(\.json)),
        ])
    }
}

/// `audit --update <id>`: one delivery per activity the update reached.
public struct UpdateAudit: Sendable, Hashable {
    public var event: String
    public var type: EventType
    public var stream: String
    public var deliveries: [Delivery]

    /// `{"event", "type", "stream", "audits": [{"activity", "deliveries": [one]}], "deliveries": [...]}` (the
    /// OpenAPI `UpdateAudit`). `deliveries` lists them all, flat, so that it reads like SPEC §7's audit shape; an
    /// update of an activity stream also names its `activity`, making it exactly that shape.
    public var json: JSONValue {
        var object = JSONObject([
            "event": .string(event), "type": .string(type.rawValue), "stream": .string(stream),
            "audits": .array(deliveries.map { .object(["activity": .string($0.activity), "deliveries": [$0.json]]) }),
            "deliveries": .array(deliveries.map(\.json)),
        ])
        if let name = StreamName(stream), name.kind == .activity { object["activity"] = .string(name.id) }
        return .object(object)
    }
}
