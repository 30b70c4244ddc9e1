internal import Foundation
import Logging

extension LedgerAPI {
    func appendEvent(_ input: Operations.appendEvent.Input) async throws -> Operations.appendEvent.Output {
        guard case .json(let event) = input.body else { throw APIError.badRequest("expected application/json") }
        if let expected = input.query.expectedVersion, expected < 0 {
            throw APIError.invalidParameter("expectedVersion", "must be 0 or more, got \(expected)")
        }
        let expectedVersions = input.query.expectedVersion.map { [event.stream: $0] } ?? [:]
        let results = try await append(events: [event], expectedVersions: expectedVersions, singleEvent: true)
        guard let result = results.first else { throw APIError.badRequest("the ledger appended nothing") }
        return .ok(.init(body: .json(Self.appended(result))))
    }

    func appendBatch(_ input: Operations.appendBatch.Input) async throws -> Operations.appendBatch.Output {
        guard case .json(let batch) = input.body else { throw APIError.badRequest("expected application/json") }
        guard !batch.events.isEmpty else {
            throw APIError.badRequest("a batch needs at least one event", field: "events")
        }
        guard batch.events.count <= Self.maxBatchEvents else {
            throw APIError.badRequest(
                "a batch holds at most \(Self.maxBatchEvents) events, got \(batch.events.count); split it", field: "events")
        }
        let expectedVersions = batch.expectedVersions?.additionalProperties ?? [:]
        for (stream, version) in expectedVersions where version < 0 {
            throw APIError.badRequest("expectedVersions['\(stream)'] must be 0 or more", field: "expectedVersions")
        }
        let results = try await append(events: batch.events, expectedVersions: expectedVersions, singleEvent: false)
        return .ok(.init(body: .json(Self.batchResult(results))))
    }

    func ingestAPNs(_ input: Operations.ingestAPNs.Input) async throws -> Operations.ingestAPNs.Output {
        guard case .json(let exchange) = input.body else { throw APIError.badRequest("expected application/json") }
        if let at = exchange.at { try Self.checkTime(at, field: "at") }
        let app = try Caller.app()
        let start = ContinuousClock.now
        let results = try await backend.ingestAPNs(app: app, exchange: Self.encode(exchange))
        acknowledge(results, since: start, app: app)
        return .ok(.init(body: .json(Self.batchResult(results))))
    }

    /// Appends through the backend, turning its event indexes into field paths of this request.
    private func append(
        events: [Components.Schemas.Event], expectedVersions: [String: Int64], singleEvent: Bool
    ) async throws -> [AppendedEvent] {
        let app = try Caller.app()
        for (index, event) in events.enumerated() {
            let prefix = singleEvent ? "" : "events[\(index)]."
            try Self.checkTime(event.at, field: prefix + "at")
            if let id = event.id { try Self.checkID(id, field: prefix + "id") }
        }
        let encoded = try events.map(Self.encode)
        return try await append(app: app, singleEvent: singleEvent) {
            try await backend.append(app: app, events: encoded, expectedVersions: expectedVersions)
        }
    }

    /// The raw-body route's append (``RawAppendMiddleware``): `body` already passed every check the
    /// generated decoder and ``checkTime(_:field:)`` make, so only the ledger's own checks remain.
    func append(_ body: RawAppendBody, singleEvent: Bool) async throws -> [AppendedEvent] {
        let app = try Caller.app()
        return try await append(app: app, singleEvent: singleEvent) {
            try await backend.append(app: app, parsedEvents: body.events, expectedVersions: body.expectedVersions)
        }
    }

    private func append(
        app: String, singleEvent: Bool, _ body: () async throws -> [AppendedEvent]
    ) async throws -> [AppendedEvent] {
        let start = ContinuousClock.now
        let results: [AppendedEvent]
        do {
            results = try await body()
        } catch var error as LedgerBackendError where singleEvent {
            // A single event is the body itself, not `events[0]`.
            if let field = error.field, field.hasPrefix("events[0]") {
                let rest = field.dropFirst("events[0]".count)
                error.field = rest.hasPrefix(".") ? String(rest.dropFirst()) : (rest.isEmpty ? nil : String(rest))
            }
            throw error
        }
        acknowledge(results, since: start, app: app)
        return results
    }

    private func acknowledge(_ results: [AppendedEvent], since start: ContinuousClock.Instant, app: String) {
        let duration = ContinuousClock.now - start
        metrics.recordAppend(results, duration: duration)
        logger.debug(
            "appended",
            metadata: [
                "ledger.app": .string(app), "ledger.events": .stringConvertible(results.count),
                "ledger.last_position": .stringConvertible(results.last?.position ?? 0),
            ]
        )
        if results.contains(where: { !$0.duplicate }) {
            appendSignal.signal()
        }
    }

    /// `Batch.events` `maxItems` in Schemas/openapi.yaml.
    static let maxBatchEvents = 10_000
    /// `Event.id` `maxLength` in Schemas/openapi.yaml.
    static let maxIDLength = 200

    /// Whether `id` has the length `Event.id` allows (1…200 characters, counted as JSON Schema counts them).
    static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.unicodeScalars.count <= maxIDLength
    }

    /// Refuses an id outside `Event.id`'s length, naming `field`.
    static func checkID(_ id: String, field: String) throws {
        guard isValidID(id) else {
            throw APIError.badRequest(
                "field '\(field)' must be 1…\(maxIDLength) characters, got \(id.unicodeScalars.count)", field: field)
        }
    }

    /// Refuses a time that is neither an RFC 3339 string nor a number of Unix seconds under 1e11, naming `field`
    /// (Schemas/openapi.yaml `Time`).
    static func checkTime(_ time: Components.Schemas.Time, field: String) throws {
        let valid: Bool
        switch time {
        case .case1(let text): valid = TimeParameter.rfc3339(text) != nil
        case .case2(let seconds): valid = seconds.isFinite && abs(seconds) < 1e11
        }
        guard valid else {
            throw APIError.badRequest(
                "field '\(field)' is neither an RFC 3339 time string nor a number of Unix seconds", field: field)
        }
    }

    static func appended(_ result: AppendedEvent) -> Components.Schemas.Appended {
        .init(
            id: result.id, stream: result.stream, position: result.position, version: result.version,
            duplicate: result.duplicate
        )
    }

    static func batchResult(_ results: [AppendedEvent]) -> Components.Schemas.BatchResult {
        .init(results: results.map(appended), lastPosition: results.map(\.position).max() ?? 0)
    }
}
