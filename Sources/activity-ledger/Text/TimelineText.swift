import Formats
import ActivityModel
import Ledger

/// The readable form of `timeline`: one aligned row per event.
enum TimelineText {
    static func render(_ entries: [TimelineStep]) -> String {
        var table = TextTable("POS", "AT", "TYPE", "SOURCE", "HASH", "PHASE", "DISPLAYED")
        for entry in entries {
            let e = entry.event.event
            let type = e.stream.kind == .channel ? "\(e.type.rawValue)@\(e.stream.id)" : e.type.rawValue
            let displayed = entry.displayed.map { "ts \($0.timestamp) \(compact($0.state, width: 50))" } ?? "-"
            table.add(
                String(entry.event.position), e.at.rfc3339, type, e.source.rawValue,
                String(Hex.encode(entry.event.hash).prefix(10)), entry.phase?.rawValue ?? "-", displayed
            )
        }
        return table.rendered
    }
}

/// The readable form of `audit`.
enum AuditText {
    static func render(_ deliveries: [Delivery], title: String) -> String {
        var table = TextTable("EVENT", "ACTIVITY", "TYPE", "TIMESTAMP", "VERDICT", "EVIDENCE")
        for d in deliveries {
            let verdict = d.reason.map { "\(d.verdict.rawValue)(\($0))" } ?? d.verdict.rawValue
            var evidence: [String] = []
            if let push = d.decidingPush { evidence.append("push \(short(push))") }
            if let observation = d.observation { evidence.append("observed \(short(observation))") }
            if evidence.isEmpty && !d.pushes.isEmpty { evidence.append("\(d.pushes.count) pushes") }
            table.add(short(d.event), d.activity, d.type.rawValue, String(d.timestamp), verdict, evidence.joined(separator: ", "))
        }
        let counts = Dictionary(grouping: deliveries, by: \.verdict).map { "\($0.value.count) \($0.key.rawValue)" }.sorted()
        return "\(title): \(deliveries.count) deliveries (\(counts.joined(separator: ", ")))\n" + table.rendered
    }
}

/// The readable form of `activities`.
enum ActivitiesText {
    static func render(_ page: ActivityPage) -> String {
        var table = TextTable("ACTIVITY", "PHASE", "TYPE", "INSTALLATION", "TOKEN", "EVENTS")
        for s in page.activities {
            table.add(
                s.activity, s.phase.rawValue + StateText.reason(s), s.attributesType, s.installation ?? "-",
                s.token.map { short($0) } ?? "-", String(s.events)
            )
        }
        var text = "\(page.activities.count) activities as of \(page.asOf.rfc3339)\n" + table.rendered
        if let next = page.nextCursor { text += "\nmore: --after \(next)" }
        return text
    }
}
