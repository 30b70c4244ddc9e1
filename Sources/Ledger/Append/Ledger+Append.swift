import ActivityModel
import Formats
import Foundation
import LedgerStore

/// What an append did with one event.
public struct AppendOutcome: Sendable, Hashable, Codable {
    /// The event's id (generated when the caller gave none).
    public var id: String
    /// Its stream (`activity:RIDE-1`), as its app names it.
    public var stream: String
    /// Its global position; for a re-sent id, the original position.
    public var position: Int64
    /// True when the id was already in the ledger with the same content (nothing was written).
    public var duplicate: Bool
    /// The version of its stream after it (for a re-sent id, the original one).
    public var version: Int64

    /// The OpenAPI `Appended`: `{"duplicate", "id", "position", "stream", "version"}`.
    public var json: JSONValue {
        .object([
            "duplicate": .bool(duplicate), "id": .string(id), "position": .int(position), "stream": .string(stream),
            "version": .int(version),
        ])
    }

    /// The OpenAPI `BatchResult` of a whole append: `{"lastPosition", "results": [Appended…]}`.
    public static func batchJSON(_ outcomes: [AppendOutcome]) -> JSONValue {
        .object([
            "lastPosition": .int(outcomes.map(\.position).max() ?? 0), "results": .array(outcomes.map(\.json)),
        ])
    }
}

extension Ledger {
    /// Appends events atomically through the store's group commit; returns once durable.
    ///
    /// - Parameters:
    ///   - expected: per stream (`activity:X`), the version its last event must have.
    ///   - app: the namespace the events are written in (SPEC §2 "Apps are namespaces"): the app of the caller's
    ///     key, or nil for the app-less namespace of plain CLI imports. App B's `activity:X` and id `E` are not
    ///     app A's: nothing one app appends can touch, or collide with, another's.
    ///
    /// Every event's storage form is decoded back before anything is written (`newEvent`), so an event built
    /// in code with a value no door would accept (an APNs status of 99) is refused, never stored unreadable.
    public func append(
        _ events: [LedgerEvent], expected: [String: ExpectedVersion] = [:], app: String? = nil
    ) async throws -> [AppendOutcome] {
        try await append(events, expected: expected, app: app, readBack: true)
    }

    /// The same for events the caller has just decoded from interchange JSON with `EventCodec.decode` (the HTTP
    /// append routes): the decoder applied every rule the read-back would, so their payloads are not decoded a
    /// second time (measured: the read-back costs ~14 % of an import; BENCHMARKS.md).
    package func append(
        decoded events: [LedgerEvent], expected: [String: ExpectedVersion] = [:], app: String? = nil
    ) async throws -> [AppendOutcome] {
        try await append(events, expected: expected, app: app, readBack: false)
    }

    private func append(
        _ events: [LedgerEvent], expected: [String: ExpectedVersion], app: String?, readBack: Bool
    ) async throws -> [AppendOutcome] {
        guard !events.isEmpty else { return [] }
        return try await commit(prepare(events, expected: expected, app: app, readBack: readBack))
    }

    /// An append checked, encoded and compressed, ready for the writer (`commit`). Preparing is the part of an
    /// append that needs no lock: a caller with appends that must land in order (the nightly job's recordings)
    /// prepares the next while the one before it commits.
    struct PreparedAppend: Sendable {
        fileprivate let events: [LedgerEvent]
        fileprivate let batch: AppendBatch
    }

    /// Everything of an append before the writer: ids, checks, storage forms (each decoded back when `readBack`),
    /// sizes, compression and the projector's inputs. Throws what `append` throws for bad events.
    func prepare(
        _ events: [LedgerEvent], expected: [String: ExpectedVersion] = [:], app: String?, readBack: Bool = true
    ) throws -> PreparedAppend {
        let app = try Self.namespace(app)
        let events = events.map(Self.withID)
        try Self.checkStreams(events)
        try Self.checkExpected(expected)
        // Compressed here, on the caller's thread: concurrent appenders compress in parallel and the writer
        // only hashes and inserts. Before the repeated ids: two spellings of one id are refused as not NFC, not
        // taken for one id sent twice.
        let stored = try events.indices.map { index in
            try Self.newEvent(events[index], app: app, field: "events[\(index)]", readBack: readBack)
        }
        try Self.checkRepeatedIDs(events)
        for index in events.indices {
            if let size = Self.exportedSizeOver(maxEventBytes, events[index], stored: stored[index]) {
                throw Self.oversize(size, limit: maxEventBytes, field: "events[\(index)]")
            }
        }
        let qualifiedExpected = Dictionary(
            expected.map { (Namespaced.qualify($0.key, app: app), $0.value) }, uniquingKeysWith: { first, _ in first })
        var batch: AppendBatch
        switch storage {
        case .file(let store): batch = AppendBatch(events: store.precompressed(stored), expected: qualifiedExpected)
        // Stored as sent (no dictionaries on PostgreSQL: SPEC §6 lets it keep a row per event).
        case .postgres: batch = AppendBatch(events: stored, expected: qualifiedExpected)
        }
        projector.attach(events, app: app, to: &batch.events)
        return PreparedAppend(events: events, batch: batch)
    }

    /// Writes a prepared append through the store's group commit; returns once durable.
    func commit(_ prepared: PreparedAppend) async throws -> [AppendOutcome] {
        let events = prepared.events
        guard !events.isEmpty else { return [] }
        do {
            switch storage {
            case .file(let store):
                let result = try await store.append(prepared.batch)
                if result.duplicate.contains(false) { appended.signal() }
                return Self.outcomes(events, result)
            case .postgres(let postgres):
                return Self.outcomes(events, try await postgres.append(prepared.batch, projector: projector))
            }
        } catch {
            throw Self.translate(error, events: events)
        }
    }

    /// An id sent twice in one batch with different content is refused at its second occurrence, naming both
    /// (the store would word it as a conflict with a row the refused batch never kept). The same event twice is
    /// a re-send: the second is a duplicate.
    static func checkRepeatedIDs(_ events: [LedgerEvent]) throws {
        guard events.count > 1 else { return }
        var first: [String: Int] = [:]
        first.reserveCapacity(events.count)
        for index in events.indices {
            guard let id = events[index].id else { continue }
            if let earlier = first[id] {
                guard events[earlier] == events[index] else {
                    throw LedgerError(
                        .conflict,
                        "event id '\(id)' is sent twice in this batch with different content (events[\(earlier)] and events[\(index)])",
                        field: "events[\(index)].id")
                }
            } else {
                first[id] = index
            }
        }
    }

    /// The namespace of `app` (nil: the app-less one), refused when it could be confused with a qualified name.
    static func namespace(_ app: String?) throws -> String {
        guard let app else { return "" }
        if app.isEmpty { throw LedgerError(.badInput, "app: must not be empty", field: "app") }
        if let problem = Identifier.problem(app) { throw LedgerError(.badInput, "app: \(problem)", field: "app") }
        return app
    }

    /// Every path that builds events in code (resync, nightly, APNs) meets the rule the interchange decoder
    /// applies: the stream must read back as itself, so what is stored always decodes.
    static func checkStreams(_ events: [LedgerEvent]) throws {
        for event in events where StreamName(event.stream.description) != event.stream {
            throw LedgerError(
                .badInput, "stream \"\(event.stream.description)\": expected activity:<id>, installation:<id> or channel:<id> with a non-empty id and no control characters",
                field: "stream")
        }
    }

    /// Every key of `expected` must be a stream name as the events' `stream` is (`checkStreams`), in NFC: a key
    /// no event could have is a client's mistake, not a stream "with no events".
    static func checkExpected(_ expected: [String: ExpectedVersion]) throws {
        for key in expected.keys where StreamName(key)?.description != key || Identifier.problem(key) != nil {
            throw LedgerError(
                .badInput,
                "expectedVersions: \(JSONString.quoted(String(key.prefix(80)))) is not a stream name (activity:<id>, installation:<id> or channel:<id>, no control characters, in NFC, at most 1024 bytes)",
                field: "expectedVersions")
        }
    }

    /// An event without an id gets a new time-ordered UUID (version 7): the unique id index then grows at its end
    /// for these events, where a random one (version 4) dirtied a random leaf page per event in every commit.
    static func withID(_ event: LedgerEvent) -> LedgerEvent {
        guard event.id == nil else { return event }
        var event = event
        var generator = SystemRandomNumberGenerator()
        event.id = CanonicalUUID.timeOrdered(milliseconds: now().milliseconds, using: &generator)
        return event
    }

    /// The storage form of `event` in `app`'s namespace. With `readBack`, its payload must decode (the second
    /// line behind each door's validation: nothing is stored that the ledger cannot read back); without, the
    /// caller has just decoded the event from interchange JSON, which applied the same rules.
    static func newEvent(
        _ event: LedgerEvent, app: String, field: String? = nil, line: Int? = nil, readBack: Bool = true
    ) throws -> NewEvent {
        let payload = EventCodec.encodePayload(event)
        if readBack, let error = Self.decodingError(payload, event) {
            let path = [field, error.field].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ".")
            throw LedgerError(.badInput, "\(error)", line: line, field: path.isEmpty ? nil : path)
        }
        // The id is among the names: one rule for all of them.
        try event.forEachName { (name, value) throws(LedgerError) in
            guard let problem = Identifier.problem(value) else { return }
            throw LedgerError(
                .badInput, "field '\(name)': \(problem)", line: line,
                field: [field, name].compactMap { $0 }.joined(separator: "."))
        }
        return NewEvent(
            id: Namespaced.qualify(event.id!, app: app), stream: Namespaced.qualify(event.stream.description, app: app),
            type: event.type.rawValue, at: event.at.milliseconds, payload: payload
        )
    }

    /// Why `payload` (the storage form of `event`) does not decode, if it does not.
    private static func decodingError(_ payload: [UInt8], _ event: LedgerEvent) -> EventDecodingError? {
        let decoded = Result { () throws(EventDecodingError) -> LedgerEvent in
            try EventCodec.decodePayload(
                payload, id: event.id!, stream: event.stream.description, type: event.type.rawValue, at: event.at)
        }
        if case .failure(let error) = decoded { return error }
        return nil
    }

    static func outcomes(_ events: [LedgerEvent], _ result: AppendResult) -> [AppendOutcome] {
        events.indices.map { index in
            AppendOutcome(
                id: events[index].id!, stream: events[index].stream.description, position: result.positions[index],
                duplicate: result.duplicate[index], version: index < result.versions.count ? result.versions[index] : 0
            )
        }
    }

    /// Store errors become ledger errors with the same message, in the app's own names, naming the event of
    /// `events` at fault (`events[i].id`); anything else passes through.
    static func translate(_ error: any Error, events: [LedgerEvent] = []) -> any Error {
        guard let error = error as? StoreError else { return error }
        var translated = ledgerError(error)
        translated.cause = error
        if error.code == .idConflict, let stored = error.eventID,
            let index = events.firstIndex(where: { $0.id == Namespaced.name(stored) })
        {
            translated.field = "events[\(index)].id"
        }
        return translated
    }

    private static func ledgerError(_ error: StoreError) -> LedgerError {
        switch error.code {
        case .versionConflict:
            var conflict = LedgerError(.conflict, Self.bareMessage(error), field: "expectedVersion")
            conflict.stream = error.stream.map(Namespaced.name)
            conflict.actualVersion = error.actualVersion
            switch error.expectedVersion {
            case .exact(let version)?: conflict.expectedVersion = version
            case .noStream?: conflict.expectedVersion = 0
            default: break
            }
            return conflict
        case .idConflict: return LedgerError(.conflict, Self.bareMessage(error), field: "id")
        case .invalidEvent: return LedgerError(.badInput, Self.bareMessage(error))
        default: return LedgerError(.storage, error.code == .busy ? error.message : error.description)
        }
    }

    /// A store message about one app's event in that app's own names (the store words it with stored names).
    private static func bareMessage(_ error: StoreError) -> String {
        var message = error.message
        for stored in [error.stream, error.eventID].compactMap({ $0 }) where stored.utf8.contains(Namespaced.separator) {
            message = message.replacingOccurrences(of: stored, with: Namespaced.name(stored))
        }
        return message
    }
}
