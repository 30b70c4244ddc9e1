import ActivityModel
import Foundation
import LedgerStore

/// A page of the global log, for consumers that follow it.
public struct FeedSlice: Sendable, Hashable {
    public var events: [LoggedEvent]
    /// Pass as the next `after`: the last position examined (even when it belonged to another app).
    public var lastPosition: Int64

    /// The OpenAPI `Feed`: `{"events": [stored event…], "lastPosition"}`.
    public var json: JSONValue {
        .object(["events": .array(events.map(\.json)), "lastPosition": .int(lastPosition)])
    }
}

extension Ledger {
    /// The events after `after`, in log order, at most `limit`, of `app`'s namespace only (nil: the app-less one).
    /// Memory stays bounded by `limit` and the scan by `limit × 64` rows, so a consumer of a quiet app
    /// does not make the server read the whole log in one request.
    /// A page ends after the event that brings its payloads to this many bytes, whatever `limit` says: 10,000
    /// events of up to 256 KB made a 2.5 GB answer, and 16 concurrent pages of 100 MB took the server from 220 MB
    /// to 2.2 GB (found by a probe). `lastPosition` says where the next page starts, as for `limit`.
    public static let feedPageBytes = 8 << 20

    public func feed(after: Int64, limit: Int, app: String? = nil) async throws -> FeedSlice {
        try await read { db in try self.feed(db, after: after, limit: limit, app: app) }
    }

    func feed(_ db: any LedgerSnapshot, after: Int64, limit: Int, app: String?) throws -> FeedSlice {
        let limit = max(1, min(limit, 10_000))
        var events: [LoggedEvent] = []
        var last = after
        let namespace = app ?? ""
        var scanned = 0
        var bytes = 0
        try db.forEachEvent(after: after) { recorded in
            scanned += 1
            last = recorded.position
            guard Namespaced.belongs(recorded.stream, to: namespace) else { return scanned < limit * 64 }
            events += readable([recorded], Self.logged)
            bytes += recorded.payload.count
            return events.count < limit && scanned < limit * 64 && bytes < Self.feedPageBytes
        }
        // Every `lastPosition` handed out is at most the head, and the head only grows: a cursor past it came from
        // another ledger or from before a restore. It used to be echoed back as `lastPosition`, so the client kept it
        // and skipped every event up to it once the log grew; the answer names the head instead (an empty page),
        // which a client following `lastPosition` continues from, and can tell from the cursor it sent. (Refusing it
        // was tried: the schema takes any `after` ≥ 0, and its fuzzing rightly counts a 4xx for it a failure.) Only a
        // scan that found nothing asks for the head: a poll that finds events costs no second query.
        if scanned == 0, after > 0, case let head = try db.lastPosition(), after > head {
            return FeedSlice(events: [], lastPosition: head)
        }
        return FeedSlice(events: events, lastPosition: last)
    }
}
