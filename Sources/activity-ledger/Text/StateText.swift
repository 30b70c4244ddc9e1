import ActivityModel

/// The readable form of `state`.
enum StateText {
    static func render(_ s: ActivityState) -> String {
        var lines = [
            "activity     \(s.activity)",
            "as of        \(s.asOf.rfc3339)",
            "phase        \(s.phase.rawValue)" + reason(s),
            "attributes   \(s.attributesType) \(compact(s.attributes, width: 80))",
            "started      \(s.startsAt.rfc3339)",
        ]
        if let ended = s.endedAt { lines.append("ended        \(ended.rfc3339)") }
        if let removed = s.removedAt { lines.append("removed      \(removed.rfc3339)") }
        lines.append("displayed    " + content(s.displayed))
        lines.append("intended     " + content(s.intended))
        lines.append("token        \(s.token.map { short($0) } ?? "none")" + (s.tokenIsDead ? " (dead)" : ""))
        if !s.channels.isEmpty { lines.append("channels     \(s.channels.joined(separator: ", "))") }
        lines.append("events       \(s.events) (last position \(s.lastPosition))")
        return lines.joined(separator: "\n")
    }

    static func reason(_ s: ActivityState) -> String {
        if let by = s.dismissedBy { return " (dismissed by \(by.rawValue))" }
        if let by = s.endedBy { return " (ended by \(by.rawValue))" }
        return ""
    }

    static func content(_ snapshot: ContentSnapshot?) -> String {
        guard let snapshot else { return "none" }
        return "ts \(snapshot.timestamp) \(compact(snapshot.state, width: 80))"
    }
}
