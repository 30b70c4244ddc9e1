import ActivityModel
import Foundation
import GRDB
import LedgerStore

/// A page of the global log, for consumers that follow it.
public struct FeedSlice: Sendable, Hashable {
    public var events: [LoggedEvent]
    /// Pass as the next `after`: the last position examined (even when it belonged to another app).
    public var lastPosition: Int64
}

extension Ledger {
    /// The events after `after`, in log order, at most `limit`, of `app`'s namespace only (nil: the app-less one).
    /// Memory stays bounded by `limit` and the scan by `limit × 64` rows, so a consumer of a quiet app
    /// does not make the server read the whole log in one request.
    public func feed(after: Int64, limit: Int, app: String? = nil) throws -> FeedSlice {
        let limit = max(1, min(limit, 10_000))
        var events: [LoggedEvent] = []
        var last = after
        let namespace = app ?? ""
        var scanned = 0
        try store.pool.read { db in
            try store.forEachEvent(in: db, after: after) { recorded in
                scanned += 1
                last = recorded.position
                guard Namespaced.belongs(recorded.stream, to: namespace) else { return scanned < limit * 64 }
                events += readable([recorded], Self.logged)
                return events.count < limit && scanned < limit * 64
            }
        }
        return FeedSlice(events: events, lastPosition: last)
    }
}
