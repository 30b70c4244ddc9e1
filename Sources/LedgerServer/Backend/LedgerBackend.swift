public import ActivityModel
public import Foundation

/// Everything the HTTP service needs from the ledger.
///
/// Every method is scoped to the caller's app (the bundle id of its API key): it must never read or write
/// another app's streams. Inputs are JSON documents in the SPEC §2/§5 interchange format, already checked
/// against `Schemas/openapi.yaml`; outputs named `…JSON` are encoded JSON in the SPEC §7 shapes, passed to
/// the client unchanged. Errors are ``LedgerBackendError``; anything else becomes a 500.
public protocol LedgerBackend: Sendable {
    /// Appends `events` (each one JSON object, as one line of an import file) atomically and in order, and
    /// returns only once they are durable. A re-sent event id is not appended again: its result carries the
    /// original position and `duplicate: true`. `expectedVersions` maps a stream name to the version it must
    /// have before the batch (0: the stream must be new); a mismatch throws ``LedgerBackendError/conflict(stream:expected:actual:)``
    /// and writes nothing. A refused event throws ``LedgerBackendError/invalidEvent(index:field:message:)``.
    func append(app: String, events: [Data], expectedVersions: [String: Int64]) async throws -> [AppendedEvent]

    /// ``append(app:events:expectedVersions:)`` for events already parsed from a request body (each one
    /// interchange object, as the client sent it), so the body is parsed once. Same contract; the default
    /// encodes each value and calls the `Data` form.
    func append(
        app: String, parsedEvents: [ActivityModel.JSONValue], expectedVersions: [String: Int64]
    ) async throws -> [AppendedEvent]

    /// Records a raw APNs exchange (the `APNsExchange` schema): the `push` event plus the
    /// `request`/`update`/`end` it carried. Unknown token or activity: ``LedgerBackendError/notFound(_:)``.
    func ingestAPNs(app: String, exchange: Data) async throws -> [AppendedEvent]

    /// The SPEC §7 `state` of `activity` as of `at` (nil: now). No request at or before T: `notFound`.
    func stateJSON(app: String, activity: String, at: Date?) async throws -> Data

    /// `{"activity":…,"entries":[{"event":{…stored event…},"phase":…,"displayed":{…}|null}]}`.
    func timelineJSON(app: String, activity: String, from: Date?, to: Date?) async throws -> Data

    /// The SPEC §7 `audit` of every update/end of `activity`.
    func auditJSON(app: String, activity: String) async throws -> Data

    /// `{"event":…,"audits":[<SPEC audit>, …]}`: one audit per activity the update/end addressed.
    func updateAuditJSON(app: String, event: String) async throws -> Data

    /// ``auditJSON(app:activity:)`` as of `at` (nil: now), like `audit --at` of the CLI.
    func auditJSON(app: String, activity: String, at: Date?) async throws -> Data

    /// ``updateAuditJSON(app:event:)`` as of `at` (nil: now).
    func updateAuditJSON(app: String, event: String, at: Date?) async throws -> Data

    /// `{"activities":[{"activity","phase","attributesType","installation","token","lastPosition"}],
    /// "nextCursor":…|null}`; `query.cursor` is a value this method returned earlier.
    func activitiesJSON(app: String, query: ActivityQuery) async throws -> Data

    /// The app's stored events with a global position greater than `after`, at most `limit`, in order.
    func feed(app: String, after: Int64, limit: Int) async throws -> FeedPage

    /// The SPEC §7 `resync` plan for a snapshot (the `Snapshot` schema), evaluated as of its `at`.
    func resyncJSON(app: String, snapshot: Data) async throws -> Data

    /// Runs the nightly job over `truth` (JSON Lines) as of `at` (nil: now) and returns the SPEC §7
    /// `nightly` report. Re-running a recorded run id adds nothing and returns the recorded report.
    func startReconciliationJSON(app: String, run: String, truth: Data, at: Date?) async throws -> Data

    /// The recorded report of `run`, or `notFound`.
    func reconciliationJSON(app: String, run: String) async throws -> Data

    /// `{"ok":Bool,"checked":N,"firstBadPosition":N|null,"message":…|null}`.
    func verifyJSON(app: String) async throws -> Data

    /// Like ``verifyJSON(app:)``, up to a digest taken earlier (`POSITION:HEX`): a different hash at that
    /// position, or a log shorter than it, is `ok: false`. A digest that does not parse is `badInput`.
    func verifyJSON(app: String, digest: String) async throws -> Data

    /// `{"position":N,"hash":"hex"}` of the chain head.
    func digestJSON(app: String) async throws -> Data

    /// The highest global position written (0 when empty); lets the feed long-poll cheaply.
    func lastPosition() async throws -> Int64
}

extension LedgerBackend {
    /// Backends without a clock of their own (test doubles) answer as of now only.
    public func auditJSON(app: String, activity: String, at: Date?) async throws -> Data {
        guard at == nil else { throw LedgerBackendError.badInput(field: "at", "this backend audits as of now only") }
        return try await auditJSON(app: app, activity: activity)
    }

    public func updateAuditJSON(app: String, event: String, at: Date?) async throws -> Data {
        guard at == nil else { throw LedgerBackendError.badInput(field: "at", "this backend audits as of now only") }
        return try await updateAuditJSON(app: app, event: event)
    }

    /// Backends without digests of their own (test doubles) refuse the parameter.
    public func verifyJSON(app: String, digest: String) async throws -> Data {
        throw LedgerBackendError.badInput(field: "digest", "this backend cannot verify up to a digest")
    }

    public func append(
        app: String, parsedEvents: [ActivityModel.JSONValue], expectedVersions: [String: Int64]
    ) async throws -> [AppendedEvent] {
        try await append(app: app, events: parsedEvents.map { Data($0.compactBytes) }, expectedVersions: expectedVersions)
    }
}

/// Where one appended (or re-sent) event landed.
public struct AppendedEvent: Sendable, Hashable, Codable {
    public var id: String
    public var stream: String
    /// Global, gapless position.
    public var position: Int64
    /// Version of the stream after this event.
    public var version: Int64
    /// The id was already recorded; `position` is the original one.
    public var duplicate: Bool

    public init(id: String, stream: String, position: Int64, version: Int64, duplicate: Bool) {
        self.id = id
        self.stream = stream
        self.position = position
        self.version = version
        self.duplicate = duplicate
    }
}

/// Filters of `GET /v1/activities`.
public struct ActivityQuery: Sendable, Hashable {
    public var phase: String?
    public var installation: String?
    public var attributesType: String?
    public var token: String?
    /// A broadcast channel the activity follows.
    public var channel: String?
    /// Phase evaluated as of this time; nil: now.
    public var at: Date?
    public var limit: Int
    public var cursor: String?

    public init(
        phase: String? = nil, installation: String? = nil, attributesType: String? = nil, token: String? = nil,
        channel: String? = nil, at: Date? = nil, limit: Int = 100, cursor: String? = nil
    ) {
        self.phase = phase
        self.installation = installation
        self.attributesType = attributesType
        self.token = token
        self.channel = channel
        self.at = at
        self.limit = limit
        self.cursor = cursor
    }
}

/// A page of the feed.
public struct FeedPage: Sendable, Hashable {
    /// Each a stored event: the SPEC §2 object with `id`, `source`, `position` and `version` filled in.
    public var events: [Data]
    /// The position to pass as the next `after`: the last event's, or the `after` asked when empty.
    public var lastPosition: Int64

    public init(events: [Data], lastPosition: Int64) {
        self.events = events
        self.lastPosition = lastPosition
    }
}
