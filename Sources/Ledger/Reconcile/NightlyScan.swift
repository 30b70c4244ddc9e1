import ActivityModel
import Foundation
import LedgerStore

/// The nightly merge: the `activities` projection and the spooled truth, both walked in activity-id order
/// (SQLite's binary order, compared here on UTF-8 bytes), one ledger page per step. Only activities that were
/// requested, have neither a recorded dismissal nor an end the device acts on by the run's time, and that
/// `NightlyFacts` cannot settle from the row are folded (a few percent on a healthy ledger).
struct NightlyScan {
    /// The projection columns that decide whether an activity needs folding.
    struct ActivityRow: Sendable {
        var activity: String
        var requestedAt: Int64?
        var endedAt: Int64?
        var dismissedAt: Int64?
        var facts: NightlyFacts
    }

    struct Candidate: Sendable {
        var row: ActivityRow
        var truth: TruthSpool.Row?
    }

    let ledger: Ledger
    let at: Instant
    /// `at` as the reasons name it (formatted once, not per `missing` item).
    private let atText: String
    let run: String
    private var activities: SortedCursor<ActivityRow>
    private var truth: SortedCursor<TruthSpool.Row>
    private var finished = false
    private(set) var scanned = 0
    private(set) var folded = 0
    /// Truth items merged so far (distinct activities of the feed, once the scan is done).
    private(set) var truthItems = 0
    /// Folds every live activity instead of trusting `NightlyFacts` (the reference the tests compare with).
    let foldAll: Bool
    /// The namespace scanned (nil: the app-less one).
    let app: String?
    static let pageSize = 1024

    init(ledger: Ledger, spool: TruthSpool, at: Instant, run: String, app: String?, foldAll: Bool = false) throws {
        self.ledger = ledger
        self.at = at
        atText = at.rfc3339
        self.run = run
        self.foldAll = foldAll
        self.app = app
        activities = SortedCursor { after in
            let activity = after?.activity
            return try await ledger.read { db in try Self.page(db, after: activity, app: app) }
        }
        let merge = try spool.merged()
        truth = SortedCursor { _ in try merge.next() }
    }

    /// The entries of the next ledger page (and of the truth items that fall before it), or nil when done.
    ///
    /// Pages are pipelined: a page's candidates are folded and judged in a task of their own while the next page is
    /// merged (and the one after it read, `SortedCursor`), so the scan keeps both cores busy. Entries still come
    /// back page by page in activity-id order.
    mutating func next() async throws -> [NightlyEntry]? {
        do {
            while true {
                let merged = try await merge()
                let previous = judging
                judging = merged.map { merged in
                    let (ledger, at, run, app) = (ledger, at, run, app)
                    return Task {
                        var entries = merged.entries
                        entries += try await Self.evaluate(
                            merged.candidates, ledger: ledger, at: at, run: run, app: app)
                        entries.sort { Self.precedes($0.activity, $1.activity) }
                        return entries
                    }
                }
                if let previous { return try await previous.value }
                if merged == nil { return nil }
            }
        } catch {
            cancel()
            throw error
        }
    }

    /// Stops the work in flight (a failed scan).
    func cancel() {
        judging?.cancel()
        activities.cancel()
        truth.cancel()
    }

    /// A merged page: the entries decided without folding, and the candidates to fold.
    private struct Merged: Sendable {
        var entries: [NightlyEntry] = []
        var candidates: [Candidate] = []
    }

    /// The page being folded and judged.
    private var judging: Task<[NightlyEntry], any Error>?

    /// Merges the next ledger page with the truth items up to it; nil when both are done.
    private mutating func merge() async throws -> Merged? {
        guard !finished else { return nil }
        let page = try await activities.takePage()
        var merged = Merged()
        guard !page.isEmpty else {
            // Truth items after the last activity: none of them has one.
            while let item = try await peekTruth() {
                merged.entries.append(missing(item))
                truth.advance()
                truthItems += 1
                if merged.entries.count == Self.pageSize { return merged }
            }
            finished = true
            return merged.entries.isEmpty ? nil : merged
        }
        scanned += page.count
        let t = at.milliseconds
        for row in page {
            while let item = try await peekTruth(), Self.precedes(item.activity, row.activity) {
                merged.entries.append(missing(item))
                truth.advance()
                truthItems += 1
            }
            var match: TruthSpool.Row?
            if let item = try await peekTruth(), item.activity == row.activity {
                match = item
                truth.advance()
                truthItems += 1
            }
            guard let requested = row.requestedAt, requested <= t else {
                if let match { merged.entries.append(missing(match)) }
                continue
            }
            // A recorded dismissal by `at`: the fold says dismissed, and the dismissal rules out `expired`.
            if let dismissed = row.dismissedAt, dismissed <= t { continue }
            // An end the device acts on by `at` (`ended_at` never counts a dropped one): the fold is over by then
            // and has a recorded end, so nothing to find. Only the first request subscribes the fold to its
            // channel, while every request adds a `channel_members` row: a channel end may mark a row with
            // several requests that the fold never hears of, so those rows are folded.
            if let ended = row.endedAt, ended <= t, row.facts.requests == 1 || !row.facts.channel { continue }
            if !foldAll, row.facts.settled(at: t, truth: match) { continue }
            merged.candidates.append(Candidate(row: row, truth: match))
        }
        folded += merged.candidates.count
        return merged
    }

    /// Folds and judges the candidates of a page, split over the cores: each chunk reads in its own snapshot
    /// (the pool's concurrent readers), so the merge order is kept by reassembling the chunks in order.
    private static func evaluate(
        _ candidates: [Candidate], ledger: Ledger, at: Instant, run: String, app: String?
    ) async throws -> [NightlyEntry] {
        guard !candidates.isEmpty else { return [] }
        let chunkSize = max(64, (candidates.count + Self.parallelism - 1) / Self.parallelism)
        let chunks = stride(from: 0, to: candidates.count, by: chunkSize).map {
            Array(candidates[$0..<min($0 + chunkSize, candidates.count)])
        }
        if chunks.count == 1 { return try await Self.judge(chunks[0], ledger: ledger, at: at, run: run, app: app) }
        return try await withThrowingTaskGroup(of: (Int, [NightlyEntry]).self) { group in
            for (index, chunk) in chunks.enumerated() {
                group.addTask { (index, try await Self.judge(chunk, ledger: ledger, at: at, run: run, app: app)) }
            }
            var results = [[NightlyEntry]](repeating: [], count: chunks.count)
            for try await (index, entries) in group { results[index] = entries }
            return results.flatMap { $0 }
        }
    }

    static let parallelism = max(1, min(8, ProcessInfo.processInfo.activeProcessorCount))

    private static func judge(_ candidates: [Candidate], ledger: Ledger, at: Instant, run: String, app: String?)
        async throws -> [NightlyEntry]
    {
        let histories = try await ledger.read { db in
            try candidates.map { try ledger.relevantEvents(db, key: Ledger.key($0.row.activity, app: app), hashes: false).map(\.positioned) }
        }
        var entries: [NightlyEntry] = []
        for (candidate, events) in zip(candidates, histories) {
            let id = candidate.row.activity
            guard let state = try? ActivityFold.state(activity: id, events: events, asOf: at) else { continue }
            var audit: [Delivery]?
            func deliveries() -> [Delivery] {
                if let audit { return audit }
                let found = DeliveryVerdicts.audit(activity: id, events: events, asOf: at)
                audit = found
                return found
            }
            // Only a system end can be `expired`, and only without a recorded end or dismissal.
            let recordedEnd =
                !state.phase.isLive && state.endedBy == .system
                && NightlyRules.recordedEnd(state: state, events: events, deliveries: deliveries)
            let entry = NightlyRules.evaluate(
                state: state, truth: candidate.truth, facts: .init(recordedEnd: recordedEnd), at: at,
                deliveries: deliveries)
            guard var entry else { continue }
            if entry.finding == .expired { entry.reportedBefore = earlierReport(of: .expired, in: events, run: run) }
            entries.append(entry)
        }
        return entries
    }

    /// The first other run (in log order) that recorded `finding` on this activity.
    static func earlierReport(of finding: NightlyFinding, in events: [PositionedEvent], run: String) -> String? {
        events.filter { event in
            guard case .reconcile(let data) = event.event.data else { return false }
            return data.run != run && data.finding == finding.rawValue && event.event.stream.kind == .activity
        }.min { $0.position < $1.position }.flatMap { event in
            if case .reconcile(let data) = event.event.data { return data.run }
            return nil
        }
    }

    /// The current truth item: from the page in memory without a suspension (a million items), else read on.
    @inline(__always)
    private mutating func peekTruth() async throws -> TruthSpool.Row? {
        if let ready = truth.ready { return ready }
        return try await truth.peek()
    }

    private func missing(_ item: TruthSpool.Row) -> NightlyEntry {
        NightlyEntry(
            finding: .missing,
            action: .init(
                activity: item.activity, action: .none,
                reason: "the truth (line \(item.line)) names an activity the ledger does not have at \(atText)"))
    }

    static func precedes(_ a: String, _ b: String) -> Bool {
        var (a, b) = (a, b)
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let common = min(x.count, y.count)
                let order = common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common)
                return order != 0 ? order < 0 : x.count < y.count
            }
        }
    }

    /// The next page of `app`'s activity rows after the bare id `after`, as bare ids. Rows of one namespace are
    /// one range of projection keys (`ActivityCandidates.namespaceCondition`), in the order of their bare ids.
    static func page(_ db: any LedgerSnapshot, after: String?, app: String?) throws -> [ActivityRow] {
        try db.nightlyRows(after: Ledger.key(after ?? "", app: app), app: app, limit: pageSize).map { row in
            var row = row
            row.activity = Namespaced.name(row.activity)
            return row
        }
    }
}
