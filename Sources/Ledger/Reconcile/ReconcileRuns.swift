import ActivityModel
import Foundation
import GRDB
import LedgerPostgres
import LedgerStore
import PostgresNIO

/// The `reconcile_runs` table: one row per recorded nightly run with its report, so re-running a run id returns
/// the recorded report without evaluating anything (the report holds payloads and counts that the `reconcile`
/// events alone do not). Created by this target's own migration, `ledger.201_reconcile_runs`.
enum ReconcileRuns {
    /// `Schemas/sql/ledger/201_reconcile_runs.sql`.
    static let sql = String(decoding: PackageResources._01_reconcile_runs_sql, as: UTF8.self)

    static func migrate(_ pool: DatabasePool) throws {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("ledger.201_reconcile_runs") { db in try db.execute(sql: sql) }
        try migrator.migrateBesideOthers(pool)
    }

    /// The key a run's report is recorded under: run ids are per app (`<app>` U+001F `<run>`, as `Namespaced`
    /// qualifies names; U+001F `<run>` for the app-less namespace), so one app can neither read nor replay
    /// another's run, and the CLI with `--app` and that app's key over HTTP name the same run. U+001F is refused in
    /// apps and run ids, so no two (app, run) pairs share a key, and no key has the form of an older one:
    /// - until 2026-11-27 13:00 UTC an app's run was keyed `<app>/<run>`, which an app named `com.A/x` shared with
    ///   app `com.A`'s run `x/…` (found: one app read another's report);
    /// - until session 26 an app-less run was keyed by its bare id, so an app-less run named `com.a/r7` was found
    ///   as app `com.a`'s run `r7` by the fallback below (found by a probe: that app read it, and could never record
    ///   its own `r7`).
    /// Rows of both older forms are still found (`legacyKey`).
    static func key(_ run: String, app: String?) -> String {
        (app ?? "") + "\u{1F}" + run
    }

    /// Where a report recorded in an older form lies: the bare run id for the app-less namespace; `<app>/<run>` for
    /// an app whose name has no `/` (those keys split only one way); nil for other apps.
    static func legacyKey(_ run: String, app: String?) -> String? {
        guard let app, !app.isEmpty else { return run }
        guard !app.utf8.contains(UInt8(ascii: "/")) else { return nil }
        return eventRun(run, app: app)
    }

    /// The run as the `reconcile` events of its findings name it (`data.run`) and their ids derive from it:
    /// `<app>/<run>` (a name of the event, so no control character), as ever, so a run interrupted before an
    /// upgrade records the same ids when it is run again.
    static func eventRun(_ run: String, app: String?) -> String {
        guard let app, !app.isEmpty else { return run }
        return "\(app)/\(run)"
    }

    static func report(run: String, _ db: any LedgerSnapshot) throws -> NightlyReport? {
        let unreadable = LedgerError(.storage, "the recorded report of run \(Namespaced.name(run)) is unreadable")
        let text: [UInt8]?
        do { text = try db.runReport(run) } catch let error as StoreError where error.code == .corruptPayload {
            throw unreadable
        }
        guard let text else { return nil }
        guard let json = try? JSONParser.parse(text), var report = NightlyReport(json: json) else { throw unreadable }
        report.status = .alreadyRecorded
        report.recordedEvents = 0
        return report
    }

    /// Records the report of a run once (a run id recorded already keeps its first report).
    ///
    /// In a file, the report is one zstd frame of its text (`ZstdFrame`, a BLOB; rows recorded before session 37
    /// hold the text): the text of 60,000 findings is ~17 MB, ~1.4 % of the million-activity ledger they were found
    /// in, for every night's run; its frame is ~0.35 MB and takes ~10 ms to write, less than the text's pages did.
    ///
    /// - Parameter text: the report's text if written already (`PendingText`); else it is written here.
    static func save(
        _ report: NightlyReport, key: String, text: [UInt8]? = nil, in ledger: Ledger, recordedAt: Instant
    ) async throws {
        let text = text ?? report.compactBytes
        switch ledger.storage {
        case .file(let store):
            let frame = ZstdFrame.compress(text)
            try await store.pool.write { db in
                let insert = try db.cachedStatement(
                    sql: "INSERT OR IGNORE INTO reconcile_runs (run, at, recorded_at, report) VALUES (?, ?, ?, ?)")
                defer { insert.resetBindings() }
                insert.bind(key, at: 1)
                insert.bind(report.at.milliseconds, at: 2)
                insert.bind(recordedAt.milliseconds, at: 3)
                insert.bind(frame, at: 4)
                _ = try insert.stepRow(db)
            }
        case .postgres(let postgres):
            let text = String(decoding: text, as: UTF8.self)
            try await postgres.log.storage {
                _ = try await postgres.log.client.query(
                    """
                    INSERT INTO reconcile_runs (run, at, recorded_at, report)
                    VALUES (\(key), \(report.at.milliseconds), \(recordedAt.milliseconds), \(text))
                    ON CONFLICT (run) DO NOTHING
                    """, logger: postgres.logger
                ).collect()
            }
        }
    }
}

extension ReconcileRuns {
    /// A report's stored text, written before its last member, `recordedEvents`, is known: the nightly job writes
    /// the bulk of it (an entry per finding) while its last findings are being recorded.
    struct PendingText: Sendable {
        /// The text without its last `0}` (nil: `recordedEvents` is not the last member).
        private var head: [UInt8]?
        private let report: NightlyReport

        /// - Parameter parts: the entries' text in parts (`NightlyReport.compactBytes(entries:)`).
        init(_ report: NightlyReport, entries parts: [[UInt8]]) {
            var report = report
            report.recordedEvents = 0
            self.report = report
            var text = report.compactBytes(entries: parts)
            if text.reversed().starts(with: #","recordedEvents":0}"#.utf8.reversed()) {
                text.removeLast(2)
                head = text
            }
        }

        /// The whole text, UTF-8 (written again only if `recordedEvents` were not the last member).
        consuming func text(recordedEvents: Int) -> [UInt8] {
            guard var head = head.take() else {
                var report = report
                report.recordedEvents = recordedEvents
                return report.compactBytes
            }
            head += "\(recordedEvents)}".utf8
            return head
        }
    }
}
