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
    ///
    /// `limit` pages a channel update's subscribers in activity-id order (the incident page shows 100k of them a
    /// page at a time): the answer then also gives `subscribers` (all of them) and `nextCursor`, passed back as
    /// `after`. Without `limit`, every addressed activity is listed.
    public func audit(update id: String, at: Instant? = nil, app: String? = nil, limit: Int? = nil, after: String? = nil)
        async throws -> UpdateAudit
    {
        let asOf = at ?? Self.now()
        let after = try after.map { text in
            guard let id = PageCursor.decode(text, kind: .subscribers) else {
                throw LedgerError(
                    .badInput, "cursor: not a cursor this ledger returned; pass the previous page's nextCursor unchanged",
                    field: "cursor")
            }
            return id
        }
        let page = limit.map { UpdateAudit.Page(limit: max(1, min($0, 1000)), after: after) }
        return try await read { db in try self.audit(db, update: id, asOf: asOf, app: app, page: page) }
    }

    /// `state` inside a read of the file the caller holds (the bench times the read and fold alone with it).
    package func state(_ db: Database, activity: String, asOf: Instant, app: String?) throws -> ActivityState {
        try state(SQLiteSnapshot(store: store, db: db), activity: activity, asOf: asOf, app: app)
    }

    func state(_ db: any LedgerSnapshot, activity: String, asOf: Instant, app: String?) throws -> ActivityState {
        let events = try foldInput(db, key: Self.key(activity, app: app), asOf: asOf)
        do {
            return try ActivityFold.state(activity: activity, events: events, asOf: asOf)
        } catch {
            throw LedgerError(.notFound, "no such activity at \(asOf.rfc3339): \(activity)", field: "activity")
        }
    }

    func audit(_ db: any LedgerSnapshot, activity: String, asOf: Instant, app: String?) throws -> ActivityAudit {
        let events = try foldInput(db, key: Self.key(activity, app: app), asOf: asOf)
        do {
            let deliveries = try DeliveryVerdicts.deliveries(activity: activity, events: events, asOf: asOf)
            return ActivityAudit(activity: activity, asOf: asOf, deliveries: deliveries)
        } catch {
            throw LedgerError(.notFound, "no such activity at \(asOf.rfc3339): \(activity)", field: "activity")
        }
    }

    func audit(_ db: any LedgerSnapshot, update id: String, asOf: Instant, app: String?, page: UpdateAudit.Page? = nil) throws
        -> UpdateAudit
    {
        let target = try event(db, id: id, app: app)
        guard target.event.type == .update || target.event.type == .end else {
            throw LedgerError(.badInput, "event \(id) is a \(target.event.type.rawValue), not an update or end", field: "event")
        }
        var activities: [String]
        var subscribers: Int
        switch target.event.stream.kind {
        case .activity:
            activities = [target.event.stream.id]
            subscribers = 1
        case .channel:
            let channel = Self.key(target.event.stream.id, app: app)
            if let page {
                // One more than the page, to know whether another follows.
                activities = try db.members(
                    of: channel, after: Self.key(page.after ?? "", app: app), limit: page.limit + 1
                ).map(Namespaced.name)
                subscribers = try db.memberCount(of: channel)
            } else {
                activities = try db.members(of: channel, after: nil, limit: nil).map(Namespaced.name)
                subscribers = activities.count
            }
        case .installation:
            activities = []
            subscribers = 0
        }
        var next: String?
        if let page {
            if page.after != nil, target.event.stream.kind == .activity { activities = [] }
            if activities.count > page.limit {
                activities.removeLast(activities.count - page.limit)
                next = activities.last
            }
        }
        var deliveries: [Delivery] = []
        for activity in activities {
            guard let audit = try? audit(db, activity: activity, asOf: asOf, app: app) else { continue }
            deliveries += audit.deliveries.filter { $0.event == id }
        }
        var audit = UpdateAudit(
            event: id, type: target.event.type, stream: target.event.stream.description, deliveries: deliveries)
        if page != nil { audit.paging = .init(subscribers: subscribers, next: next) }
        return audit
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
    /// Set when a page was asked (`limit`): how many activities the update addressed, and where the next page starts.
    public var paging: Paging?

    public init(event: String, type: EventType, stream: String, deliveries: [Delivery]) {
        self.event = event
        self.type = type
        self.stream = stream
        self.deliveries = deliveries
    }

    struct Page {
        var limit: Int
        var after: String?
    }

    public struct Paging: Sendable, Hashable {
        public var subscribers: Int
        /// The last activity listed when more follow.
        public var next: String?
        public var nextCursor: String? { next.map { PageCursor.encode($0, kind: .subscribers) } }
    }

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
        if let paging {
            object["subscribers"] = .int(Int64(paging.subscribers))
            object["nextCursor"] = paging.nextCursor.map(JSONValue.string) ?? .null
        }
        return .object(object)
    }
}
