import ActivityModel

/// What the nightly job found wrong with an activity (SPEC §5). Each activity gets at most one: the first that
/// applies in the order `leaked`, `expired`, `deadToken`, `drift`, `undelivered`; `missing` is a truth item with
/// no activity.
public enum NightlyFinding: String, Hashable, Sendable, CaseIterable, Codable {
    case drift, leaked, expired, deadToken, undelivered, missing

    /// Severity order used for the readable summary's worst cases.
    public var rank: Int {
        switch self {
        case .leaked: 0
        case .expired: 1
        case .deadToken: 2
        case .drift: 3
        case .undelivered: 4
        case .missing: 5
        }
    }
}

/// One activity's finding and the action that fixes it, in the SPEC §7 `actions` shape plus `finding` and,
/// for a push sender, the activity's newest `token` and its `channel`.
public struct NightlyEntry: Hashable, Sendable {
    public var finding: NightlyFinding
    public var action: ResyncPlan.Action
    public var token: String?
    public var channel: String?
    /// For `expired`: the first earlier run that already reported it (nil when this run is the first). The
    /// system end cannot be undone, so it is reported on every run until an end or dismissal is recorded, but a
    /// reader can tell the new ones from the standing ones.
    public var reportedBefore: String?

    public init(
        finding: NightlyFinding, action: ResyncPlan.Action, token: String? = nil, channel: String? = nil,
        reportedBefore: String? = nil
    ) {
        self.finding = finding
        self.action = action
        self.token = token
        self.channel = channel
        self.reportedBefore = reportedBefore
    }

    public var activity: String { action.activity }

    /// `{"activity","action","reason","payload"?,"finding","token","channel","reportedBefore"?}`.
    public var json: JSONValue {
        guard case .object(var object) = action.json else { return action.json }
        object["finding"] = .string(finding.rawValue)
        object["token"] = token.map(JSONValue.string) ?? .null
        object["channel"] = channel.map(JSONValue.string) ?? .null
        if let reportedBefore { object["reportedBefore"] = .string(reportedBefore) }
        return .object(object)
    }

    init?(json: JSONValue) {
        guard let activity = json["activity"]?.stringValue,
            let action = json["action"]?.stringValue.flatMap(ReconcileAction.init(rawValue:)),
            let finding = json["finding"]?.stringValue.flatMap(NightlyFinding.init(rawValue:))
        else { return nil }
        self.init(
            finding: finding,
            action: ResyncPlan.Action(
                activity: activity, action: action, reason: json["reason"]?.stringValue ?? "",
                payload: json["payload"].flatMap { $0.isNull ? Optional<JSONValue>.none : $0 }),
            token: json["token"]?.stringValue, channel: json["channel"]?.stringValue,
            reportedBefore: json["reportedBefore"]?.stringValue)
    }
}
