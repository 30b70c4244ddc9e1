import ActivityModel
import Foundation
import LedgerStore
import Logging

extension Ledger {
    /// SPEC §5 nightly reconciliation of the ledger against the app server's truth feed, as of `at`.
    ///
    /// Streams: the feed is sorted into a temporary spool (`TruthSpool`, an external sort), then merged in
    /// activity-id order with the `activities` projection read a page at a time; only activities that can have a
    /// finding are folded (no recorded dismissal by `at`, no end the device acts on by `at`, and not settled by the
    /// row's `NightlyFacts`). Memory is bounded by a page, plus the report's entries (one per activity with a finding).
    ///
    /// Records one `reconcile` event (`source: ledger`, deterministic id) per activity with a finding, at `at`,
    /// then the report in `reconcile_runs`. Re-running a recorded run id evaluates nothing, adds nothing and
    /// returns the recorded report with status `alreadyRecorded`.
    ///
    /// Invalid truth lines are listed with their line numbers and skipped; with `strict`, any invalid line stops
    /// the run before anything is recorded (status `stopped`, no findings evaluated).
    ///
    /// - Parameter app: when given, only this app's activities are evaluated (its namespace), and the run id is
    ///   this app's (recorded as `<app>/<run>`; the report names it as given).
    public func nightly(
        truth: JSONLinesReader, runID: String, at: Instant, strict: Bool = false, app: String? = nil,
        progress: @escaping (NightlyProgress) -> Void = { _ in }
    ) async throws -> NightlyReport {
        try await nightly(
            truth: truth, runID: runID, at: at, strict: strict, app: app, progress: progress, foldAll: false)
    }

    /// `nightly`, optionally folding every live activity instead of only those `NightlyFacts` cannot settle.
    /// `foldAll` keeps the skip of dismissed and ended rows (`ReconcileSkipTests` holds that skip to a plain fold).
    func nightly(
        truth: JSONLinesReader, runID: String, at: Instant, strict: Bool, app: String?,
        progress: @escaping (NightlyProgress) -> Void, foldAll: Bool
    ) async throws -> NightlyReport {
        guard !runID.isEmpty else { throw LedgerError(.badInput, "the run id must not be empty", field: "run") }
        if let problem = Identifier.problem(runID) { throw LedgerError(.badInput, "run: \(problem)", field: "run") }
        // The HTTP schema's bound (`run`: 1–200 characters), for the CLI too (it took 100,000).
        if runID.unicodeScalars.count > 200 {
            throw LedgerError(.badInput, "run: longer than 200 characters", field: "run")
        }
        if let file { try ReconcileRuns.migrate(file.pool) }
        if let recorded = try await nightlyReport(run: runID, app: app) { return recorded }
        let asGiven = runID
        let runID = ReconcileRuns.eventRun(runID, app: app)

        let spool = TruthSpool()
        try await spool.load(truth) { progress(NightlyProgress(phase: .readingTruth, done: $0)) }
        var report = NightlyReport(
            run: runID, at: at, status: .recorded, strict: strict, summary: [:], entries: [],
            invalidLines: spool.invalid, invalidLineCount: spool.invalidCount, truthLines: spool.lines,
            truthItems: 0, activitiesScanned: 0, activitiesFolded: 0, recordedEvents: 0)
        if strict && spool.invalidCount > 0 {
            report.truthItems = try spool.count()
            report.status = .stopped
            report.run = asGiven
            return report
        }

        var pending: [NightlyEntry] = []
        // The findings of earlier pages are recorded while later pages are scanned: the writer and the
        // scan overlap. A page never holds an activity recorded before it (pages and records both go in
        // activity-id order, and a `missing` item is recorded only once the scan has passed it).
        var recordings = Recordings()
        // The report's `actions`, written a recording's findings at a time beside the scan (`entriesText`).
        var parts: [Task<[UInt8], Never>] = []
        var scan = try NightlyScan(ledger: self, spool: spool, at: at, run: runID, app: app, foldAll: foldAll)
        do {
            while let batch = try await scan.next() {
                for entry in batch {
                    report.summary[entry.finding, default: 0] += 1
                    report.entries.append(entry)
                    pending.append(entry)
                }
                report.activitiesScanned = scan.scanned
                report.activitiesFolded = scan.folded
                progress(NightlyProgress(phase: .evaluating, done: Int64(scan.scanned)))
                // In appends of 2,048 at most: a scan batch can hold any number of findings (the `missing` items
                // after the last ledger activity come in one), and one append of a million of them held its events
                // and their projection rows at once (found by a probe: 4.3 GB for a million unknown activities).
                var start = 0
                while pending.count - start >= Self.recordingBatch {
                    report.recordedEvents += try await recordings.makeRoom()
                    let entries = Array(pending[start..<(start + Self.recordingBatch)])
                    recordings.add(to: self) { try self.prepareRecord(entries, run: runID, at: at, app: app) }
                    parts.append(Task { NightlyReport.entriesText(entries) })
                    start += Self.recordingBatch
                }
                pending.removeFirst(start)
            }
        } catch {
            // Never leave a recording running behind a failed scan.
            await recordings.drop()
            throw error
        }
        report.truthItems = scan.truthItems
        for finding in NightlyFinding.allCases where report.summary[finding] == nil { report.summary[finding] = 0 }
        if !pending.isEmpty {
            let rest = pending  // under 2,048
            recordings.add(to: self) { try self.prepareRecord(rest, run: runID, at: at, app: app) }
            parts.append(Task { NightlyReport.entriesText(rest) })
        }
        // The report is written on another core while the last findings are recorded; only its count waits.
        let written = Task { [report, parts] in
            var texts: [[UInt8]] = []
            for part in parts { texts.append(await part.value) }
            return ReconcileRuns.PendingText(report, entries: texts)
        }
        report.recordedEvents += try await recordings.finish()
        let text = await written.value.text(recordedEvents: report.recordedEvents)
        try await ReconcileRuns.save(
            report, key: ReconcileRuns.key(asGiven, app: app), text: text, in: self, recordedAt: Self.now())
        logger.info(
            "nightly run recorded",
            metadata: [
                "ledger.reconcile.run": "\(runID)", "ledger.reconcile.findings": "\(report.entries.count)",
                "ledger.reconcile.folded": "\(report.activitiesFolded)",
            ])
        report.run = asGiven
        return report
    }

    /// The report of `app`'s recorded nightly run `run` (status `alreadyRecorded`), or nil.
    public func nightlyReport(run: String, app: String? = nil) async throws -> NightlyReport? {
        let keys = [ReconcileRuns.key(run, app: app), ReconcileRuns.legacyKey(run, app: app)].compactMap { $0 }
        var report = try await read { db -> NightlyReport? in
            for key in keys { if let found = try ReconcileRuns.report(run: key, db) { return found } }
            return nil
        }
        report?.run = run
        return report
    }

    /// Findings recorded per append.
    static let recordingBatch = 2048

    /// The append of the run's `reconcile` events for `entries`.
    private func prepareRecord(_ entries: [NightlyEntry], run: String, at: Instant, app: String?) throws
        -> PreparedAppend
    {
        var events: [LedgerEvent] = []
        let ids = ReconcileIDs.NightlyIDs(run: run)
        for entry in entries {
            events.append(
                LedgerEvent(
                    id: ids.id(activity: entry.activity),
                    stream: .activity(entry.activity), at: at, source: .ledger,
                    data: .reconcile(
                        ReconcileData(
                            run: run, action: entry.action.action, reason: entry.action.reason,
                            finding: entry.finding.rawValue))))
        }
        return try prepare(events, app: app)
    }

    /// A run's recording appends in flight, in activity order: each is prepared (encoded, compressed) in a task of
    /// its own while the one before it commits, and commits after it. At most `depth` at once, so a run with a
    /// million findings holds two appends' events, not all of them.
    private struct Recordings {
        private var tasks: [Task<Int, any Error>] = []
        static let depth = 2

        /// Starts an append prepared by `prepare`; it commits after those already added. Returns nothing: its
        /// count of new events comes from `makeRoom` or `finish`.
        mutating func add(to ledger: Ledger, _ prepare: @escaping @Sendable () throws -> PreparedAppend) {
            let before = tasks.last
            tasks.append(
                Task {
                    let prepared = try prepare()
                    _ = try await before?.value  // its count is taken by `makeRoom` or `finish`
                    return try await ledger.commit(prepared).filter { !$0.duplicate }.count
                })
        }

        /// Waits for the oldest append while `depth` are in flight; returns how many new events it recorded.
        mutating func makeRoom() async throws -> Int {
            guard tasks.count >= Self.depth else { return 0 }
            return try await tasks.removeFirst().value
        }

        /// Waits for every append; returns how many new events they recorded.
        mutating func finish() async throws -> Int {
            var count = 0
            while !tasks.isEmpty { count += try await tasks.removeFirst().value }
            return count
        }

        /// Waits for the appends in flight, ignoring their outcome (a failed scan).
        mutating func drop() async {
            while !tasks.isEmpty { _ = try? await tasks.removeFirst().value }
        }
    }
}

/// Progress of a nightly run, for a CLI progress line.
public struct NightlyProgress: Sendable {
    public enum Phase: String, Sendable { case readingTruth, evaluating }
    public var phase: Phase
    /// Bytes of truth read, or ledger activities scanned.
    public var done: Int64
}

extension Ledger {
    /// `nightly` over a truth feed held in memory (an HTTP upload): spooled through a temporary file, so the run
    /// itself streams the same way as from a file.
    public func nightly(
        truthBytes: some Collection<UInt8>, runID: String, at: Instant, strict: Bool = false, app: String? = nil
    ) async throws -> NightlyReport {
        let path = FileManager.default.temporaryDirectory.path + "/ledger-truth-upload-\(UUID().uuidString).jsonl"
        guard FileManager.default.createFile(atPath: path, contents: Data(truthBytes)) else {
            throw LedgerError(.storage, "cannot spool the truth feed to \(path)")
        }
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await nightly(truth: try JSONLinesReader(path: path), runID: runID, at: at, strict: strict, app: app)
    }
}
