import ActivityModel
import Formats
import Foundation
import LedgerStore

/// Filters of `activities` (CLI) and `GET /v1/activities` (HTTP). All given filters must hold.
public struct ActivityFilter: Sendable, Hashable {
    public var phase: Phase?
    public var installation: String?
    public var attributesType: String?
    /// Any token the activity ever had (current or rotated away).
    public var token: String?
    /// The start of a token (hex digits) the activity has or ever had: what an engineer pastes from a log line.
    public var tokenPrefix: String?
    public var channel: String?
    /// The namespace listed: the caller's app (the server scopes every list to it), nil for the app-less one.
    public var app: String?
    /// Phases are evaluated as of this time (default now).
    public var at: Instant?
    public var limit: Int
    /// Paging: the `nextCursor` of the previous page (opaque; one this ledger did not hand out is refused).
    public var after: String?

    public init(
        phase: Phase? = nil, installation: String? = nil, attributesType: String? = nil, token: String? = nil,
        tokenPrefix: String? = nil, channel: String? = nil, app: String? = nil, at: Instant? = nil, limit: Int = 100,
        after: String? = nil
    ) {
        self.tokenPrefix = tokenPrefix
        self.phase = phase
        self.installation = installation
        self.attributesType = attributesType
        self.token = token
        self.channel = channel
        self.app = app
        self.at = at
        self.limit = limit
        self.after = after
    }
}

/// A page of activities; `next` is the last activity listed when more may follow, nil on the last page.
public struct ActivityPage: Sendable, Hashable {
    public var asOf: Instant
    public var activities: [ActivityState]
    public var next: String?

    /// The cursor of the following page (pass it as `after`), nil on the last.
    public var nextCursor: String? { next.map { PageCursor.encode($0, kind: .activities) } }

    public var json: JSONValue {
        .object([
            "asOf": .string(asOf.rfc3339),
            "activities": .array(activities.map(\.listJSON)),
            "nextCursor": nextCursor.map(JSONValue.string) ?? .null,
        ])
    }
}

extension ActivityState {
    /// The compact form used in lists.
    public var listJSON: JSONValue {
        .object([
            "activity": .string(activity), "phase": .string(phase.rawValue),
            "endedBy": endedBy.map { .string($0.rawValue) } ?? .null,
            "dismissedBy": dismissedBy.map { .string($0.rawValue) } ?? .null,
            "attributesType": .string(attributesType),
            "installation": installation.map(JSONValue.string) ?? .null,
            "token": token.map(JSONValue.string) ?? .null,
            "displayedTimestamp": displayed.map { .int(Int64($0.timestamp)) } ?? .null,
            "events": .int(Int64(events)), "lastPosition": .int(Int64(lastPosition)),
        ])
    }
}

extension Ledger {
    /// Lists activities matching `filter`, ordered by id. The projection narrows the candidates with conditions
    /// that any activity in the asked phase must meet; the fold of each candidate then decides, so the phase
    /// shown is exactly what `state --at` says.
    public func activities(_ filter: ActivityFilter) async throws -> ActivityPage {
        let after = try filter.after.map { text in
            guard let id = PageCursor.decode(text, kind: .activities) else {
                throw LedgerError(
                    .badInput, "cursor: not a cursor this ledger returned; pass the previous page's nextCursor unchanged",
                    field: "cursor")
            }
            return id
        }
        if let prefix = filter.tokenPrefix, prefix.isEmpty || prefix.utf8.count > 200 || !Hex.isDigits(prefix.utf8) {
            throw LedgerError(.badInput, "tokenPrefix: expected 1–200 hex digits", field: "tokenPrefix")
        }
        // A push token is hex digits (the codec's rule for `token` events): anything else could only list nothing.
        if let token = filter.token, token.isEmpty || !Hex.isDigits(token.utf8) {
            throw LedgerError(.badInput, "token: expected a push token of hex digits", field: "token")
        }
        let asOf = filter.at ?? Self.now()
        return try await read { db in try self.activities(db, filter, after: after, asOf: asOf) }
    }

    func activities(_ db: any LedgerSnapshot, _ filter: ActivityFilter, after: String?, asOf: Instant) throws -> ActivityPage {
        let limit = max(1, min(filter.limit, 1000))
        var found: [ActivityState] = []
        // Cursors and candidates are projection keys (`Namespaced`); pages name bare ids.
        var cursor = Self.key(after ?? "", app: filter.app)
        while found.count < limit {
            let candidates = try db.candidates(ActivityCandidates(filter: filter, asOf: asOf, after: cursor, limit: 256))
            guard let last = candidates.last else { return ActivityPage(asOf: asOf, activities: found, next: nil) }
            for key in candidates {
                cursor = key
                guard let state = try? state(db, activity: Namespaced.name(key), asOf: asOf, app: filter.app) else {
                    continue
                }
                if let phase = filter.phase, state.phase != phase { continue }
                found.append(state)
                if found.count == limit { break }
            }
            if candidates.count < 256 && cursor == last && found.count < limit {
                return ActivityPage(asOf: asOf, activities: found, next: nil)
            }
        }
        return ActivityPage(asOf: asOf, activities: found, next: found.last?.activity)
    }
}
