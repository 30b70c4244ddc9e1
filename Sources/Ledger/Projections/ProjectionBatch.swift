import ActivityModel
import Foundation
import LedgerStore
import Synchronization

/// Applies events to the projection tables: one append's (inline), or a whole log's (`rebuild`, which writes
/// rows out now and then). Activity rows are read once, changed in memory and written back at `flush`, which
/// keeps the per-event cost of a busy activity low.
struct ProjectionBatch<Store: ProjectionRows> {
    /// The tables' rows.
    private(set) var store: Store
    private var rows: [String: ActivitySummary] = [:]
    /// Own events that only count (`reconcile`) of activities whose row is not held: counted into the stored row in
    /// place at `flush`, without reading it (a nightly run records one per finding, on rows nothing else touches).
    private var counted: [String: ActivitySummary.Counted] = [:]
    /// Hash values of the activities written so far, when the table started empty; a collision costs a read.
    private var written: Set<Int>?

    /// With `startsEmpty` (a rebuild), the activities table held no row when the batch began, so an activity
    /// it has not written yet needs no read.
    init(_ store: Store, startsEmpty: Bool = false) {
        self.store = store
        if startsEmpty { written = [] }
    }

    /// Tells the store which events follow (`ProjectionRows.prepare`).
    mutating func prepare(_ events: [ProjectionEvent]) throws {
        try store.prepare(events)
    }

    /// Activity rows held in memory, to be written by `flush`.
    var pendingRows: Int { rows.count + counted.count }
    /// Payload bytes the held rows keep alive (a rebuild's content states stay in their payloads).
    private(set) var heldBytes = 0

    mutating func apply(_ event: ProjectionEvent, position: Int64) throws {
        let at = event.at
        switch event.stream.kind {
        case .activity:
            try applyToActivity(event, id: event.stream.id, position: position, at: at)
        case .channel:
            try applyToChannel(event, channel: event.stream.id, at: at)
        case .installation:
            if case .startToken(let token) = event.body {
                try store.addStartToken(installation: event.stream.id, token: token, at: at)
            }
        }
    }

    private mutating func applyToActivity(_ event: ProjectionEvent, id: String, position: Int64, at: Int64) throws {
        // The other tables first: none of them depends on the activity's row.
        switch event.body {
        case .request(let request):
            if case .channel(let channel)? = request.pushType {
                try addMember(channel: channel, activity: id, since: at)
            }
        case .token(let token):
            try store.addToken(token, activity: id, at: at)
        case .push(let push):
            try recordDeath(push, at: at)
        case .reconcile where rows[id] == nil && mayBeStored(id):
            if counted[id] == nil {
                counted[id] = .init(position: position, at: at)
            } else {
                counted[id]!.add(position: position, at: at)
            }
            return
        default:
            break
        }
        // Folded through no closure: one capturing the event copied it (and released it) for every event.
        let index = try heldRow(id)
        heldBytes += Self.fold(event, into: &rows.values[index], position: position, at: at)
    }

    /// An event of the activity's own stream, folded into its row; the change in payload bytes the row keeps alive.
    private static func fold(
        _ event: ProjectionEvent, into row: inout ActivitySummary, position: Int64, at: Int64
    ) -> Int {
        let before = heldBytes(row)
        foldFact(event, into: &row, position: position, at: at)
        return heldBytes(row) - before
    }

    private static func foldFact(
        _ event: ProjectionEvent, into row: inout ActivitySummary, position: Int64, at: Int64
    ) {
        row.count(position: position, at: at)
        if case .reconcile = event.body {} else { row.noteFact(at: at) }
        switch event.body {
        case .request(let request):
            row.applyRequest(request, at: at)
            row.requests += 1
            row.noteIntended(request.content.state, at: at, position: position)
        case .token(let token):
            row.applyToken(token, at: at, position: position)
        case .update(let content, let timestamp):
            row.applyContent(content, timestamp: timestamp)
            row.noteSent(content, timestamp: timestamp, at: at, position: position)
        case .end(let end):
            row.applyEnd(end, at: at, source: event.source)
            if let content = end.content { row.noteSent(content, timestamp: end.timestamp, at: at, position: position) }
        case .dismiss(let by):
            row.applyDismiss(by: by, at: at)
        case .push(let push):
            if !push.isSuccess { row.noteDoubt(.failedPush) }
        case .observe:
            row.noteDoubt(.observation)
        case .subscribe:
            row.noteDoubt(.ownSubscribe)
        case .startToken, .reconcile:
            break
        }
    }

    /// Channel updates and ends reach every activity subscribed at that time.
    private mutating func applyToChannel(_ event: ProjectionEvent, channel: String, at: Int64) throws {
        switch event.body {
        case .subscribe(let activity):
            try addMember(channel: channel, activity: activity, since: at)
        case .update(let content, let timestamp):
            for member in try members(of: channel, at: at) {
                try updateSummary(member) { row in row.applyContent(content, timestamp: timestamp) }
            }
        case .end(let end):
            for member in try members(of: channel, at: at) {
                try updateSummary(member) { row in row.applyEnd(end, at: at, source: event.source) }
            }
        default:
            break
        }
    }

    /// A 410 kills its token from the APNs timestamp (or the push's own time).
    private mutating func recordDeath(_ push: ProjectionEvent.Push, at: Int64) throws {
        guard push.status == 410, let token = push.token else { return }
        try store.killToken(token, from: push.apnsTimestamp ?? at)
    }

    private mutating func addMember(channel: String, activity: String, since: Int64) throws {
        try store.addMember(channel: channel, activity: activity, since: since)
    }

    private mutating func members(of channel: String, at: Int64) throws -> [String] {
        try store.members(of: channel, at: at)
    }

    /// Changes an activity's row in place, reading it first if it is not held yet. Keeps `heldBytes`: the
    /// payload bytes held rows keep alive through their intended content state.
    private mutating func updateSummary(_ id: String, _ change: (inout ActivitySummary) -> Void) throws {
        let index = try heldRow(id)
        heldBytes += Self.change(&rows.values[index], change)
    }

    /// Changes a row in place (no copy of it); the change in payload bytes it keeps alive.
    private static func change(_ row: inout ActivitySummary, _ change: (inout ActivitySummary) -> Void) -> Int {
        let before = heldBytes(row)
        change(&row)
        return heldBytes(row) - before
    }

    /// Where an activity's row is held, reading it first if it is not held yet (changed in place there, no copy).
    private mutating func heldRow(_ id: String) throws -> Dictionary<String, ActivitySummary>.Index {
        if let held = rows.index(forKey: id) { return held }
        var row = try readSummary(id) ?? ActivitySummary(activity: id)
        // Counted earlier in the batch: those events come before this change.
        if let earlier = counted.removeValue(forKey: id) { row.count(earlier) }
        rows[id] = row
        return rows.index(forKey: id)!
    }

    /// The payload bytes a held row keeps alive.
    private static func heldBytes(_ row: ActivitySummary) -> Int {
        row.intendedState?.storedBytes ?? 0
    }

    /// Flushes of at least this many rows hash their intended states on two threads first (`hashIntendedStates`).
    static var parallelHashRows: Int { 256 }

    /// Replaces each held row's intended state that is still payload bytes by its hash, computed on two threads.
    /// Each is a parse, a canonical form and a SHA-256, and a rebuild's last flush writes every activity it held
    /// with nothing left to read beside it: on one thread that was a quarter of the flush.
    private mutating func hashIntendedStates() {
        let pending = rows.indices.compactMap { index in
            rows.values[index].intendedState.flatMap { $0.storedBytes > 0 ? (index: index, state: $0) : nil }
        }
        guard !pending.isEmpty else { return }
        let hashes = Mutex([Data](repeating: Data(), count: pending.count))
        DispatchQueue.concurrentPerform(iterations: 2) { part in
            let mine = stride(from: part, to: pending.count, by: 2).map { ($0, pending[$0].state.hash) }
            hashes.withLock { hashes in for (slot, hash) in mine { hashes[slot] = hash } }
        }
        let computed = hashes.withLock { $0 }
        for (slot, held) in pending.enumerated() { rows.values[held.index].intendedState = .hashed(computed[slot]) }
    }

    /// The stored row of `id`; no read when the batch started from empty tables and has not written it.
    private mutating func readSummary(_ id: String) throws -> ActivitySummary? {
        guard mayBeStored(id) else { return nil }
        return try store.summary(id)
    }

    /// False when the batch started from empty tables and has not written `id`'s row.
    private func mayBeStored(_ id: String) -> Bool {
        written.map { $0.contains(id.hashValue) } ?? true
    }

    /// Counts the `counted` events into their stored rows in place; those the store did not count are read,
    /// counted and held like any row, for the write that follows.
    private mutating func countInPlace() throws {
        guard !counted.isEmpty else { return }
        let uncounted = try store.count(counted)
        for id in uncounted {
            guard let earlier = counted[id] else { continue }
            var row = try readSummary(id) ?? ActivitySummary(activity: id)
            row.count(earlier)
            rows[id] = row
        }
        counted.removeAll(keepingCapacity: true)
    }

    /// Writes the held rows of activities whose own last event is at or before `position`, and forgets them, as
    /// `flush` does (a later event of one of them reads its row back and writes it again).
    ///
    /// A rebuild calls it as it goes, for activities that have gone quiet: most activities live over a stretch of
    /// the log, so their rows are written while the readers still decode, instead of all of them after the scan,
    /// where the writing thread ran alone (a tenth of a sealed rebuild's wall time, BENCHMARKS.md session 20).
    mutating func flush(quietSince position: Int64) throws {
        try countInPlace()
        let quiet = rows.compactMap { id, row in (row.lastPosition ?? 0) <= position ? id : nil }
        guard !quiet.isEmpty else { return }
        var written: [ActivitySummary] = []
        written.reserveCapacity(quiet.count)
        for id in quiet {
            let row = rows.removeValue(forKey: id)!
            heldBytes -= row.intendedState?.storedBytes ?? 0
            written.append(row)
        }
        try store.write(written)
        noteWritten(quiet)
    }

    /// Writes the rows held in memory and forgets them (the next `apply` reads them back).
    mutating func flush() throws {
        try countInPlace()
        guard !rows.isEmpty else { return }
        if rows.count >= Self.parallelHashRows { hashIntendedStates() }
        try store.write(rows.values)
        noteWritten(rows.keys)
        rows.removeAll(keepingCapacity: true)
        heldBytes = 0
    }

    /// Records that the rows of `ids` are in the table now (when the batch started from empty tables).
    private mutating func noteWritten(_ ids: some Collection<String>) {
        guard written != nil else { return }
        written!.reserveCapacity(written!.count + ids.count)
        for id in ids { written!.insert(id.hashValue) }
    }
}
