import ActivityModel
public import Foundation
import Ledger
import LedgerStore

/// The real backend: a `Ledger` file behind the HTTP contract.
///
/// App scoping: a stream belongs to the app of the key that first wrote it (the Ledger's `stream_owners`).
/// Reads of another app's activity — or of one written without an app, by a CLI import without `--app` —
/// answer 404, exactly as for an activity that does not exist, so a key learns nothing of other apps.
public struct LedgerAdapter: LedgerBackend {
    public let ledger: Ledger

    public init(ledger: Ledger) {
        self.ledger = ledger
    }

    public func append(app: String, events: [Data], expectedVersions: [String: Int64]) async throws -> [AppendedEvent] {
        try Self.checkSizes(events, limit: ledger.maxEventBytes)
        return try await append(app: app, decoded: Self.decode(events, EventCodec.decode), expectedVersions: expectedVersions)
    }

    public func append(
        app: String, parsedEvents: [ActivityModel.JSONValue], expectedVersions: [String: Int64]
    ) async throws -> [AppendedEvent] {
        try Self.checkSizes(parsedEvents, limit: ledger.maxEventBytes)
        return try await append(app: app, decoded: Self.decode(parsedEvents, EventCodec.decode), expectedVersions: expectedVersions)
    }

    /// Decodes every event, naming the refused one by its index in the request.
    private static func decode<Input>(
        _ events: [Input], _ decode: (Input) throws(EventDecodingError) -> LedgerEvent
    ) throws -> [LedgerEvent] {
        var decoded: [LedgerEvent] = []
        decoded.reserveCapacity(events.count)
        for (index, event) in events.enumerated() {
            do {
                decoded.append(try decode(event))
            } catch {
                throw LedgerBackendError.invalidEvent(index: index, field: error.field, message: error.description)
            }
        }
        return decoded
    }

    private func append(
        app: String, decoded: [LedgerEvent], expectedVersions: [String: Int64]
    ) async throws -> [AppendedEvent] {
        let expected = expectedVersions.mapValues { $0 == 0 ? ExpectedVersion.noStream : .exact($0) }
        let outcomes: [AppendOutcome]
        do {
            outcomes = try await translating { try await ledger.append(decoded: decoded, expected: expected, app: app) }
        } catch let error as LedgerBackendError where error.code == .conflict && error.field == "id" {
            throw namingRepeatedID(error, in: decoded, app: app)
        }
        return zip(decoded, outcomes).map { event, outcome in
            AppendedEvent(
                id: outcome.id, stream: event.stream.description, position: outcome.position,
                version: outcome.version, duplicate: outcome.duplicate
            )
        }
    }

    /// The store names the id; the client needs the event: `events[i].id`. An id sent twice in one batch with
    /// different content is refused at its second occurrence, and the store's "already stored at position N"
    /// names a row the refused batch never kept, so the message says what happened instead.
    private func namingRepeatedID(_ error: LedgerBackendError, in events: [LedgerEvent], app: String) -> LedgerBackendError {
        let occurrences = events.indices.filter { index in
            events[index].id.map { error.message.contains("'\($0)'") } ?? false
        }
        guard let first = occurrences.first, let id = events[first].id else { return error }
        var named = error
        named.field = "events[\(first)].id"
        let storedBefore = (try? ledger.event(id: id, app: app)) != nil
        if !storedBefore, let repeated = occurrences.dropFirst().first(where: { events[$0] != events[first] }) {
            named.field = "events[\(repeated)].id"
            named.message =
                "event id '\(id)' is sent twice in this batch with different content (events[\(first)] and events[\(repeated)])"
        }
        return named
    }

    public func ingestAPNs(app: String, exchange: Data) async throws -> [AppendedEvent] {
        let document = try Self.parse(exchange, field: "body")
        return try await translating {
            // A token resolves only within the caller's app, so an unknown token is the same 404 whatever
            // other apps hold.
            let outcomes = try await ledger.ingestAPNs(document, app: app)
            return try outcomes.map { outcome in
                let logged = try ledger.event(id: outcome.id, app: app)
                return AppendedEvent(
                    id: outcome.id, stream: logged.event.stream.description, position: outcome.position,
                    version: logged.version, duplicate: outcome.duplicate
                )
            }
        }
    }

    public func stateJSON(app: String, activity: String, at: Date?) async throws -> Data {
        try await run {
            return Self.encode(try ledger.state(activity: activity, at: at.map(Self.instant), app: app).json)
        }
    }

    public func timelineJSON(app: String, activity: String, from: Date?, to: Date?) async throws -> Data {
        try await run {
            let entries = try ledger.timeline(
                activity: activity, from: from.map(Self.instant), to: to.map(Self.instant), app: app)
            return Self.encode(["activity": .string(activity), "entries": .array(entries.map(\.json))])
        }
    }

    public func auditJSON(app: String, activity: String) async throws -> Data {
        try await auditJSON(app: app, activity: activity, at: nil)
    }

    public func auditJSON(app: String, activity: String, at: Date?) async throws -> Data {
        try await run {
            return Self.encode(try ledger.audit(activity: activity, at: at.map(Self.instant), app: app).json)
        }
    }

    public func updateAuditJSON(app: String, event: String) async throws -> Data {
        try await updateAuditJSON(app: app, event: event, at: nil)
    }

    public func updateAuditJSON(app: String, event: String, at: Date?) async throws -> Data {
        try await run {
            do {
                return Self.encode(try ledger.audit(update: event, at: at.map(Self.instant), app: app).json)
            } catch let error as LedgerError where error.code == .notFound {
                throw LedgerError(.notFound, "no event with id \(event)", field: "event")
            }
        }
    }

    public func activitiesJSON(app: String, query: ActivityQuery) async throws -> Data {
        try await run {
            let phase = try query.phase.map { text in
                guard let phase = Phase(rawValue: text) else {
                    throw LedgerError(.badInput, "phase: expected pending, active, stale, ended or dismissed", field: "phase")
                }
                return phase
            }
            let page = try ledger.activities(ActivityFilter(
                phase: phase, installation: query.installation, attributesType: query.attributesType,
                token: query.token, channel: query.channel, app: app, at: query.at.map(Self.instant), limit: query.limit, after: query.cursor
            ))
            return Self.encode(page.json)
        }
    }

    public func feed(app: String, after: Int64, limit: Int) async throws -> FeedPage {
        try await run {
            let page = try ledger.feed(after: after, limit: limit, app: app)
            return FeedPage(events: page.events.map { Self.encode($0.json) }, lastPosition: page.lastPosition)
        }
    }

    public func resyncJSON(app: String, snapshot: Data) async throws -> Data {
        try await run {
            let snapshot = try DeviceSnapshot(json: snapshot)
            return Self.encode(try await ledger.resync(snapshot: snapshot, app: app).json)
        }
    }

    public func startReconciliationJSON(app: String, run: String, truth: Data, at: Date?) async throws -> Data {
        try await self.run {
            let at = at.map(Self.instant) ?? Instant(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
            let report = try await ledger.nightly(truthBytes: truth, runID: Self.scoped(run, app: app), at: at, app: app)
            return Self.encode(Self.unscoped(report.json, run: run))
        }
    }

    public func reconciliationJSON(app: String, run: String) async throws -> Data {
        try await self.run {
            guard let report = try ledger.nightlyReport(run: Self.scoped(run, app: app)) else {
                throw LedgerError(.notFound, "no reconciliation run \(run)", field: "run")
            }
            return Self.encode(Self.unscoped(report.json, run: run))
        }
    }

    public func verifyJSON(app: String) async throws -> Data {
        try await run { Self.encode(try ledger.store.verify()) }
    }

    public func verifyJSON(app: String, digest: String) async throws -> Data {
        guard let expected = LedgerStore.Digest(digest) else {
            throw APIError.invalidParameter("digest", "'\(digest)' is not POSITION:HEX (64 hex digits)")
        }
        return try await run { Self.encode(try ledger.store.verify(upTo: expected)) }
    }

    /// The CLI's `verify --json` names (`reason`, `digest`) beside the original `message`.
    private static func encode(_ report: VerifyReport) -> Data {
        let reason: ActivityModel.JSONValue = report.reason.map { .string($0) } ?? .null
        return encode([
            "ok": .bool(report.ok), "checked": .int(report.checked),
            "firstBadPosition": report.firstBadPosition.map { .int($0) } ?? .null,
            "message": reason, "reason": reason, "digest": .string(report.lastGood.description),
        ])
    }

    public func digestJSON(app: String) async throws -> Data {
        try await run {
            let digest = try ledger.store.digest()
            return Self.encode(["position": .int(digest.position), "hash": .string(digest.hex), "digest": .string(digest.description)])
        }
    }

    public func lastPosition() async throws -> Int64 {
        try await translating { try ledger.store.lastPosition() }
    }

    // MARK: - Helpers

    /// Run ids are per app: the ledger records `<app>/<run>`, so one app can neither read nor replay another's run.
    static func scoped(_ run: String, app: String) -> String { "\(app)/\(run)" }

    /// The report as the client named its run.
    static func unscoped(_ report: ActivityModel.JSONValue, run: String) -> ActivityModel.JSONValue {
        guard case .object(var object) = report else { return report }
        for index in object.members.indices where object.members[index].key == "run" {
            object.members[index].value = .string(run)
        }
        return .object(object)
    }

    /// Runs a query on the reads lane (never on a cooperative thread), mapping ledger errors.
    ///
    /// Appends, APNs ingestion and `lastPosition` do not use it: their only blocking work is one short indexed
    /// read (stream ownership, the head position) — the commit itself runs on GRDB's writer queue — and the two
    /// thread hops cost more than that read (measured: single appends and `/health` were slower on a lane).
    private func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await BlockingExecutor.reads.run { try await translating(body) }
    }

    /// Maps ledger errors to the HTTP contract's errors.
    /// Also for reads: an SQLite failure (a file busy past the busy timeout, in SQLite's rare exclusive moments)
    /// is a 503 with `Retry-After`, never a 500.
    private func translating<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as LedgerError {
            throw Self.translate(error)
        } catch let error as LedgerBackendError {
            throw error
        } catch {
            let storage = EventStore.storageError(error, path: ledger.path, busyTimeout: ledger.store.configuration.busyTimeout)
            guard let storage = storage as? StoreError else { throw error }
            throw LedgerBackendError(code: .unavailable, message: storage.message)
        }
    }

    static func translate(_ error: LedgerError) -> LedgerBackendError {
        switch error.code {
        case .badInput: return .unprocessable(field: error.field, error.message)
        case .notFound: return .notFound(error.message)
        case .forbidden: return .unprocessable(field: error.field ?? "stream", error.message)
        case .conflict:
            if let stream = error.stream, let actual = error.actualVersion {
                return .conflict(stream: stream, expected: error.expectedVersion ?? 0, actual: actual)
            }
            return LedgerBackendError(code: .conflict, message: error.message, field: error.field)
        default:
            return LedgerBackendError(code: .unavailable, message: error.message)
        }
    }

    static func parse(_ data: Data, field: String) throws -> ActivityModel.JSONValue {
        do {
            return try JSONParser.parse(data)
        } catch {
            throw LedgerBackendError.malformedJSON(field: field, "malformed JSON: \(error)")
        }
    }

    static func encode(_ value: ActivityModel.JSONValue) -> Data {
        var writer = JSONWriter()
        writer.write(value)
        return Data(writer.bytes)
    }

    static func instant(_ date: Date) -> Instant {
        Instant(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }
}
