/// Who reported or decided an event (SPEC §2). Defaults to `server` on input.
public enum Source: String, Hashable, Sendable, Codable, CaseIterable {
    case app, server, apns, device, ledger
}

/// The event vocabulary of SPEC §2.
public enum EventType: String, Hashable, Sendable, Codable, CaseIterable {
    case request, token, startToken, update, end, dismiss, push, observe, subscribe, reconcile

    /// The stream kinds an event of this type may be appended to.
    public var allowedStreams: Set<StreamKind> {
        switch self {
        case .request, .token, .dismiss, .observe, .reconcile: [.activity]
        case .startToken: [.installation]
        case .update, .end, .push: [.activity, .channel]
        case .subscribe: [.channel]
        }
    }
}

/// An activity's phase at a time T (SPEC §3).
public enum Phase: String, Hashable, Sendable, Codable, CaseIterable {
    case pending, active, stale, ended, dismissed

    /// Order of the lifecycle: a phase never moves to a lower rank as T grows, except `stale` → `active`
    /// when a newer update arrives (both are "live").
    public var rank: Int {
        switch self {
        case .pending: 0
        case .active, .stale: 1
        case .ended: 2
        case .dismissed: 3
        }
    }

    /// `pending`, `active` or `stale`: the activity is (or will be) on screen and takes updates.
    public var isLive: Bool { rank <= 1 }
}

/// How an activity receives remote updates.
public enum PushType: Hashable, Sendable {
    case none
    case token
    case channel(String)
}

public enum ActivityStyle: String, Hashable, Sendable, Codable, CaseIterable {
    case standard, transient
}

public enum RequestOrigin: String, Hashable, Sendable, Codable, CaseIterable {
    case app, pushToStart
}

public enum APNsEnvironment: String, Hashable, Sendable, Codable, CaseIterable {
    case production, sandbox
}

/// When an ended activity leaves the Lock Screen.
public enum DismissalPolicy: Hashable, Sendable {
    case `default`
    case immediate
    case after(Instant)
}

/// Who removed an activity with a `dismiss` event.
public enum DismissedByActor: String, Hashable, Sendable, Codable, CaseIterable {
    case user, system
}

/// The reason an activity ended (SPEC §7 `endedBy`).
public enum EndedBy: String, Hashable, Sendable, Codable, CaseIterable {
    case app, server, system
}

/// The reason an activity left the screen (SPEC §7 `dismissedBy`).
public enum DismissedBy: String, Hashable, Sendable, Codable, CaseIterable {
    case user, system, policy
}

/// What reconciliation decided for an activity (SPEC §5).
public enum ReconcileAction: String, Hashable, Sendable, Codable, CaseIterable {
    case update, end, cleanup, adopt, forget, endDuplicate, rebind, none
}
