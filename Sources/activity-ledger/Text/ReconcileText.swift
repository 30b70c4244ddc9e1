import ActivityModel
import Ledger

/// The readable forms of `reconcile resync` and `reconcile nightly`.
enum ReconcileText {
    static func render(_ plan: ResyncPlan, at: Instant) -> String {
        var counts: [ReconcileAction: Int] = [:]
        for action in plan.actions { counts[action.action, default: 0] += 1 }
        let summary = ReconcileAction.allCases.compactMap { kind in counts[kind].map { "\(kind.rawValue) \($0)" } }
        var table = TextTable("ACTIVITY", "ACTION", "PAYLOAD", "REASON")
        for action in plan.actions {
            table.add(
                action.activity, action.action.rawValue, action.payload.map { compact($0, width: 40) } ?? "-",
                action.reason)
        }
        return """
            resync of installation \(plan.installation) as of \(at.rfc3339): \(plan.actions.count) activities \
            (\(summary.joined(separator: ", ")))
            \(table.rendered)
            """
    }

    /// Counts by finding, then the worst cases: the first `worst` entries in severity order
    /// (leaked, expired, deadToken, drift, undelivered, missing).
    static func render(_ report: NightlyReport, worst: Int = 10) -> String {
        var lines: [String] = []
        switch report.status {
        case .recorded: lines.append("nightly run \(report.run) as of \(report.at.rfc3339): recorded")
        case .alreadyRecorded:
            lines.append("nightly run \(report.run) as of \(report.at.rfc3339): already recorded, nothing added")
        case .stopped:
            lines.append("nightly run \(report.run): stopped (--strict), nothing recorded")
        }
        lines.append(
            "truth: \(report.truthItems) items in \(report.truthLines) lines; ledger: \(report.activitiesScanned) activities scanned, \(report.activitiesFolded) folded"
        )
        if report.invalidLineCount > 0 {
            lines.append("invalid truth lines: \(report.invalidLineCount) (\(report.invalidLineHandling))")
            for invalid in report.invalidLines.prefix(5) { lines.append("  line \(invalid.line): \(invalid.reason)") }
        }
        guard report.status != .stopped else { return lines.joined(separator: "\n") }
        let counts = NightlyFinding.allCases.sorted { $0.rank < $1.rank }.map { "\($0.rawValue) \(report.summary[$0] ?? 0)" }
        lines.append("findings: " + counts.joined(separator: ", "))
        let ordered = report.entries.enumerated().sorted { ($0.element.finding.rank, $0.offset) < ($1.element.finding.rank, $1.offset) }
        if !ordered.isEmpty {
            var table = TextTable("ACTIVITY", "FINDING", "ACTION", "REASON")
            for (_, entry) in ordered.prefix(worst) {
                table.add(entry.activity, entry.finding.rawValue, entry.action.action.rawValue, entry.action.reason)
            }
            lines.append("worst cases (\(min(worst, ordered.count)) of \(ordered.count)):")
            lines.append(table.rendered)
        }
        return lines.joined(separator: "\n")
    }
}
