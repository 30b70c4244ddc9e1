import ActivityModel
import Foundation
import GRDB
import LedgerStore

/// One line of `timeline`: an event and the activity as it stood right after it.
public struct TimelineStep: Sendable, Hashable {
    public var event: LoggedEvent
    /// Phase and displayed content after this event (nil before the activity's request).
    public var phase: Phase?
    public var displayed: ContentSnapshot?

    /// `{"event": <stored event>, "phase", "displayed"}` (the OpenAPI `Timeline` entry).
    public var json: JSONValue {
        .object([
            "event": event.json,
            "phase": phase.map { .string($0.rawValue) } ?? .null,
            "displayed": displayed?.json ?? .null,
        ])
    }
}

/// `timeline`: an activity's steps (SPEC §7 `{"activity", "entries": [...]}`, the OpenAPI `Timeline`).
public struct TimelineReport: Sendable, Hashable {
    public var activity: String
    public var entries: [TimelineStep]

    public var json: JSONValue {
        .object(["activity": .string(activity), "entries": .array(entries.map(\.json))])
    }
}

extension Ledger {
    /// The events of an activity (and of its channels, from when it subscribed) in event-time order, each with
    /// the phase and displayed content right after it (`ActivityFold.timeline`), plus where the log keeps each one.
    /// `from`/`to` bound the listed events by `at`, inclusive; the state after each still counts every earlier event.
    /// `from` after `to` is an empty window, not an error.
    public func timeline(activity: String, from: Instant? = nil, to: Instant? = nil, app: String? = nil) async throws
        -> TimelineReport
    {
        let all = try await activityEvents(activity, app: app)
        return Self.timeline(activity: activity, events: all, from: from, to: to ?? all.map(\.event.at).max()!)
    }

    /// Every event of the activity's stream and of the channels it follows, with hashes; notFound when its
    /// stream has none.
    func activityEvents(_ activity: String, app: String?) async throws -> [LoggedEvent] {
        let key = Self.key(activity, app: app)
        let all = try await read { db in try self.relevantEvents(db, key: key, hashes: true) }
        guard all.contains(where: { $0.event.stream.kind == .activity }) else {
            throw LedgerError(.notFound, "no such activity: \(activity)", field: "activity")
        }
        return all
    }

    static func timeline(activity: String, events all: [LoggedEvent], from: Instant?, to: Instant) -> TimelineReport {
        let byPosition = Dictionary(all.map { ($0.position, $0) }, uniquingKeysWith: { first, _ in first })
        let cards = ActivityFold.timelineCards(activity: activity, events: all.map(\.positioned), from: from, to: to)
        let steps = cards.map {
            TimelineStep(event: byPosition[$0.event.position]!, phase: $0.card.phase, displayed: $0.card.displayed)
        }
        return TimelineReport(activity: activity, entries: steps)
    }
}
