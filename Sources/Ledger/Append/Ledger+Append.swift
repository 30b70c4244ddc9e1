import ActivityModel
import Foundation
import GRDB
import LedgerStore

/// What an append did with one event.
public struct AppendOutcome: Sendable, Hashable, Codable {
    /// The event's id (generated when the caller gave none).
    public var id: String
    /// Its global position; for a re-sent id, the original position.
    public var position: Int64
    /// True when the id was already in the ledger with the same content (nothing was written).
    public var duplicate: Bool
    /// The version of its stream after it (for a re-sent id, the original one).
    public var version: Int64
}

extension Ledger {
    /// Appends events atomically through the store's group commit; returns once durable.
    ///
    /// - Parameters:
    ///   - expected: per stream (`activity:X`), the version its last event must have.
    ///   - app: the caller's app. A stream belongs to the app that first wrote it; another app is refused.
    public func append(
        _ events: [LedgerEvent], expected: [String: ExpectedVersion] = [:], app: String? = nil
    ) async throws -> [AppendOutcome] {
        guard !events.isEmpty else { return [] }
        let events = events.map(Self.withID)
        try Self.checkStreams(events)
        if let app { try checkOwnership(of: events, app: app) }
        // Compressed here, on the caller's thread: concurrent appenders compress in parallel and the writer
        // only hashes and inserts.
        let stored = events.map(Self.newEvent)
        for index in events.indices {
            if let size = Self.exportedSizeOver(maxEventBytes, events[index], stored: stored[index]) {
                throw Self.oversize(size, limit: maxEventBytes, field: "events[\(index)]")
            }
        }
        let batch = AppendBatch(events: store.precompressed(stored), expected: expected)
        projector.handOver(events, app: app)
        do {
            let result = try await store.append(batch)
            projector.withdraw(events)
            if let app {
                // Committed: the projector claimed every stream a new event of the batch is on for `app` (or
                // the batch failed), so the next append to them needs no read.
                let claimed = Set(events.indices.filter { !result.duplicate[$0] }.map { events[$0].stream.description })
                knownOwners.remember(claimed.map { (stream: $0, app: app) })
            }
            return Self.outcomes(events, result)
        } catch {
            projector.withdraw(events)
            throw Self.translate(error)
        }
    }

    /// Every path that builds events in code (resync, nightly, APNs) meets the rule the interchange decoder
    /// applies: the stream must read back as itself, so what is stored always decodes.
    static func checkStreams(_ events: [LedgerEvent]) throws {
        for event in events where StreamName(event.stream.description) != event.stream {
            throw LedgerError(
                .badInput, "stream \"\(event.stream.description)\": expected activity:<id>, installation:<id> or channel:<id> with a non-empty id",
                field: "stream")
        }
    }

    static func withID(_ event: LedgerEvent) -> LedgerEvent {
        guard event.id == nil else { return event }
        var event = event
        event.id = UUID().uuidString.lowercased()
        return event
    }

    static func newEvent(_ event: LedgerEvent) -> NewEvent {
        NewEvent(
            id: event.id!, stream: event.stream.description, type: event.type.rawValue,
            at: event.at.milliseconds, payload: EventCodec.encodePayload(event)
        )
    }

    static func outcomes(_ events: [LedgerEvent], _ result: AppendResult) -> [AppendOutcome] {
        events.indices.map { index in
            AppendOutcome(
                id: events[index].id!, position: result.positions[index], duplicate: result.duplicate[index],
                version: index < result.versions.count ? result.versions[index] : 0
            )
        }
    }

    /// Store errors become ledger errors with the same message; anything else passes through.
    static func translate(_ error: any Error) -> any Error {
        guard let error = error as? StoreError else { return error }
        switch error.code {
        case .versionConflict:
            var conflict = LedgerError(.conflict, error.message, field: "expectedVersion")
            conflict.stream = error.stream
            conflict.actualVersion = error.actualVersion
            switch error.expectedVersion {
            case .exact(let version)?: conflict.expectedVersion = version
            case .noStream?: conflict.expectedVersion = 0
            default: break
            }
            return conflict
        case .idConflict: return LedgerError(.conflict, error.message, field: "id")
        case .invalidEvent: return LedgerError(.badInput, error.message)
        default: return LedgerError(.storage, error.description)
        }
    }

    /// Refuses, before anything is written, events on streams another app owns. Owners already seen are answered from memory (an owner
    /// never changes); the others are read from committed data, and remembered.
    func checkOwnership(of events: [LedgerEvent], app: String) throws {
        let streams = Array(Set(events.map { $0.stream.description }))
        var unknown: [String] = []
        for (stream, owner) in zip(streams, knownOwners.owners(of: streams)) {
            guard let owner else { unknown.append(stream); continue }
            if owner != app { throw Self.foreign(stream) }
        }
        guard !unknown.isEmpty else { return }
        let found = try store.pool.read { db in
            try unknown.compactMap { stream in try StreamOwners.owner(of: stream, db).map { (stream: stream, app: $0) } }
        }
        knownOwners.remember(found)
        if let foreign = found.first(where: { $0.app != app }) { throw Self.foreign(foreign.stream) }
    }

    static func foreign(_ stream: String) -> LedgerError {
        LedgerError(.forbidden, "stream \(stream) belongs to another app", field: "stream")
    }

    /// The same inside a transaction (an import), which may see owners claimed but not yet committed:
    /// nothing read here is remembered.
    func checkOwnership(in db: Database, of events: [LedgerEvent], app: String) throws {
        for stream in Set(events.map { $0.stream.description }) {
            if let owner = try StreamOwners.owner(of: stream, db), owner != app { throw Self.foreign(stream) }
        }
    }
}
