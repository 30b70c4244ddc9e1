import ActivityModel
import Foundation
import GRDB
import LedgerStore

/// One row of the `activities` table: the facts about an activity that lists and filters need without a fold.
///
/// Every rule here is order-insensitive (earliest end wins, newest token wins by `at` then position …), so applying
/// the log in position order — inline or in a rebuild — gives the same row whatever order events arrived in.
struct ActivitySummary: Equatable, Sendable {
    var activity: String
    var attributesType: String?
    var installation: String?
    var pushType: String?
    var channel: String?
    var origin: String?
    var requestedAt: Int64?
    var startAt: Int64?
    var token: String?
    var tokenAt: Int64?
    var tokenPosition: Int64?
    var endedAt: Int64?
    var endedBy: String?
    var endPolicy: String?
    var endPolicyDate: Int64?
    var dismissedAt: Int64?
    var dismissedBy: String?
    var contentTimestamp: Int64?
    var staleAt: Int64?
    var events: Int64 = 0
    var firstPosition: Int64?
    var lastPosition: Int64?
    var lastAt: Int64?
    /// Nightly facts (`103_nightly_facts.sql`, `NightlyFacts`): newest own `at` apart from reconcile events.
    var factsAt: Int64?
    var intendedAt: Int64?
    var intendedPosition: Int64?
    /// SHA-256 of the intended content state's canonical JSON; filled from `intendedState` when written.
    var intendedHash: Data?
    /// The intended content state set since the row was read, hashed once at write time (most are replaced).
    var intendedState: ContentState?
    var requests: Int64 = 0
    var doubts: Int64 = 0

    init(activity: String) { self.activity = activity }

    /// Counts an event of the activity's own stream.
    mutating func count(position: Int64, at: Int64) {
        count(Counted(position: position, at: at))
    }

    /// Counts own events in position order, all after those counted already (`Counted`).
    mutating func count(_ counted: Counted) {
        events += counted.events
        if firstPosition == nil { firstPosition = counted.firstPosition }
        lastPosition = counted.lastPosition
        lastAt = max(lastAt ?? counted.lastAt, counted.lastAt)
    }

    /// Own events that only count (`reconcile`): how many, the first and last position, the newest `at`. Counting
    /// them one by one or at once gives the same row, so a batch can keep them without the row and a store can
    /// apply them to the stored row in place (`ProjectionRows.count`, the same rule as SQL).
    struct Counted: Equatable, Sendable {
        var events: Int64 = 1
        var firstPosition: Int64
        var lastPosition: Int64
        var lastAt: Int64

        init(position: Int64, at: Int64) {
            firstPosition = position
            lastPosition = position
            lastAt = at
        }

        /// One more, later in the log.
        mutating func add(position: Int64, at: Int64) {
            events += 1
            lastPosition = position
            lastAt = max(lastAt, at)
        }
    }

    mutating func applyRequest(_ request: ProjectionEvent.Request, at: Int64) {
        guard requestedAt.map({ at < $0 }) ?? true else { return }
        requestedAt = at
        startAt = request.scheduledStart ?? at
        attributesType = request.attributesType
        installation = request.installation
        origin = request.origin?.rawValue
        switch request.pushType {
        case .none?, nil: pushType = "none"
        case .token?: pushType = "token"
        case .channel(let id)?:
            pushType = "channel"
            channel = id
        }
        applyContent(request.content, timestamp: at / 1000)
    }

    mutating func applyToken(_ newToken: String, at: Int64, position: Int64) {
        if let tokenAt, let tokenPosition, (tokenAt, tokenPosition) > (at, position) { return }
        token = newToken
        tokenAt = at
        tokenPosition = position
    }

    /// Newest content timestamp wins; oversize content never becomes displayed, so it is not counted.
    mutating func applyContent(_ content: ProjectionEvent.Content, timestamp: Int64) {
        guard !content.isTooLarge else { return }
        if let contentTimestamp, contentTimestamp > timestamp { return }
        contentTimestamp = timestamp
        staleAt = content.staleDate
    }

    /// `ended_at` is the earliest end the device acts on (`104_honoured_ends.sql`): a dropped one is recorded and
    /// flagged but ends nothing, in the fold as on the device, so it must not make the activity look ended.
    mutating func applyEnd(_ end: ProjectionEvent.End, at: Int64, source: Source) {
        if let content = end.content { applyContent(content, timestamp: end.timestamp) }
        guard DeviceDrop.reason(contentTooLarge: end.content?.isTooLarge == true, timestamp: end.timestamp, at: at)
            == nil, endedAt.map({ at < $0 }) ?? true
        else { return }
        endedAt = at
        endedBy = source == .app ? "app" : "server"
        switch end.dismissalPolicy {
        case .default?, nil:
            endPolicy = "default"
            endPolicyDate = nil
        case .immediate?:
            endPolicy = "immediate"
            endPolicyDate = nil
        case .after(let date)?:
            endPolicy = "after"
            endPolicyDate = date.milliseconds
        }
    }

    mutating func applyDismiss(by: DismissedByActor, at: Int64) {
        guard dismissedAt.map({ at < $0 }) ?? true else { return }
        dismissedAt = at
        dismissedBy = by.rawValue
    }
}
