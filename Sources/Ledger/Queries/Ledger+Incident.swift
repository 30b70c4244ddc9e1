import ActivityModel
import Foundation

/// Everything the incident view shows of one activity over a window of event time: its timeline, its delivery
/// verdicts, its state at the window's end, and the Lock Screen card at every moment in the window where it can
/// change (`GET /v1/activities/{id}/incident`, `activity-ledger report`).
///
/// `cards` make the view work with no server: the card as of any T in the window is the last card whose `at` ≤ T
/// (with `asOf` T). Its moments are the window's start, every event's `at`, and every deadline a state names
/// (start, stale date, 8 h end, 12 h cap, end, removal, token death), so between two cards nothing changes; a test
/// holds this against `state --at` at random times.
public struct IncidentReport: Sendable, Hashable {
    public var activity: String
    public var from: Instant
    public var to: Instant
    public var generatedAt: Instant
    /// As of `to`.
    public var state: ActivityState
    /// Events with `from` ≤ `at` ≤ `to`.
    public var timeline: TimelineReport
    /// Verdicts as the evidence stands now, of the updates and ends in the window.
    public var audit: ActivityAudit
    /// The activity as of each moment it can change, ascending.
    public var cards: [ActivityCard]

    /// `{"activity", "from", "to", "generatedAt", "state", "timeline", "audit", "cards": [{"at", …}]}`.
    public var json: JSONValue {
        .object([
            "activity": .string(activity), "from": .string(from.rfc3339), "to": .string(to.rfc3339),
            "generatedAt": .string(generatedAt.rfc3339), "state": state.json,
            // Each entry's displayed content is on the cards: entries keep the event and the phase after it.
            "timeline": .object([
                "activity": .string(activity),
                "entries": .array(
                    timeline.entries.map {
                        .object(["event": $0.event.json, "phase": $0.phase.map { .string($0.rawValue) } ?? .null])
                    }),
            ]),
            "audit": audit.json, "cards": .array(cards.map(Self.card)),
        ])
    }

    /// What the Lock Screen card shows of a state (attributes are the same on every card: they are in `state`).
    public static func card(_ state: ActivityCard) -> JSONValue {
        .object([
            "at": .string(state.asOf.rfc3339), "phase": .string(state.phase.rawValue),
            "endedBy": state.endedBy.map { .string($0.rawValue) } ?? .null,
            "dismissedBy": state.dismissedBy.map { .string($0.rawValue) } ?? .null,
            "displayed": state.displayed?.json ?? .null,
            "staleDate": state.staleDate.map { .string($0.rfc3339) } ?? .null,
            "token": state.token.map(JSONValue.string) ?? .null, "tokenDead": .bool(state.tokenIsDead),
            "events": .int(Int64(state.events)), "lastPosition": .int(state.lastPosition),
        ])
    }
}

extension Ledger {
    /// The incident view of `activity` over [`from`, `to`]. `from` defaults to its request; `to` to a little past
    /// the later of its last event and its removal from the screen, but not after now.
    /// `from` after `to` is an empty window (no events, cards or verdicts), as for `timeline`.
    /// - Throws: notFound for an unknown activity, or one not yet requested at `to`.
    public func incident(activity: String, from: Instant? = nil, to: Instant? = nil, app: String? = nil) async throws
        -> IncidentReport
    {
        let now = Self.now()
        let all = try await activityEvents(activity, app: app)
        let events = all.map(\.positioned)
        let lastAt = all.map(\.event.at).max()!
        let current: ActivityState
        do {
            current = try ActivityFold.state(activity: activity, events: events, asOf: max(now, lastAt))
        } catch {
            throw LedgerError(.notFound, "no such activity: \(activity)", field: "activity")
        }
        let from = from ?? current.requestedAt
        // A little past the removal (a twentieth of the window, at least a minute), so its band shows.
        let end = max(lastAt, current.removedAt ?? now)
        let to = to ?? min(now, end.adding(milliseconds: max(60_000, (end.milliseconds - from.milliseconds) / 20)))
        let cards = from <= to ? ActivityFold.cards(activity: activity, events: events, from: from, to: to) : []
        guard let state = ActivityFold.states(activity: activity, events: events, at: [to])[0] else {
            throw LedgerError(.notFound, "no such activity at \(to.rfc3339): \(activity)", field: "activity")
        }
        let timeline = Self.timeline(activity: activity, events: all, from: from, to: to)
        let deliveries: [Delivery]
        do {
            deliveries = try DeliveryVerdicts.deliveries(activity: activity, events: events, asOf: max(now, lastAt))
        } catch {
            throw LedgerError(.notFound, "no such activity: \(activity)", field: "activity")
        }
        let audit = ActivityAudit(
            activity: activity, asOf: max(now, lastAt),
            deliveries: deliveries.filter { $0.at >= from && $0.at <= to })
        return IncidentReport(
            activity: activity, from: from, to: to, generatedAt: now, state: state, timeline: timeline, audit: audit,
            cards: cards)
    }
}
