import ActivityModel
internal import Foundation
import Ledger
import LedgerStore
import Logging

extension LedgerAPI {
    func appendEvent(_ input: Operations.appendEvent.Input) async throws -> Operations.appendEvent.Output {
        guard case .json(let event) = input.body else { throw APIError.badRequest("expected application/json") }
        if let expected = input.query.expectedVersion, expected < 0 {
            throw APIError.invalidParameter("expectedVersion", "must be 0 or more, got \(expected)")
        }
        try Self.checkTime(event.at, field: "at")
        if let id = event.id { try Self.checkID(id, field: "id") }
        let expected = input.query.expectedVersion.map { [event.stream: $0] } ?? [:]
        let sent = try RawAppendBody.sentDocument ?? JSONParser.parse(Self.interchange(event))
        let outcomes = try await append(
            [sent], sizes: Self.checkSizes, decode: EventCodec.decode, expected: expected, single: true)
        return .ok(.init(body: .json(.rendered(outcomes[0].json))))
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
        let expected = batch.expectedVersions?.additionalProperties ?? [:]
        for (stream, version) in expected where version < 0 {
            throw APIError.badRequest("expectedVersions['\(stream)'] must be 0 or more", field: "expectedVersions")
        }
        for (index, event) in batch.events.enumerated() {
            try Self.checkTime(event.at, field: "events[\(index)].at")
            if let id = event.id { try Self.checkID(id, field: "events[\(index)].id") }
        }
        let sent: [JSONValue]
        if case .object(let root)? = RawAppendBody.sentDocument, case .array(let events)? = root["events"],
            events.count == batch.events.count
        {
            sent = events
        } else {
            sent = try batch.events.map { try JSONParser.parse(Self.interchange($0)) }
        }
        let outcomes = try await append(
            sent, sizes: Self.checkSizes, decode: EventCodec.decode, expected: expected, single: false)
        return .ok(.init(body: .json(.rendered(AppendOutcome.batchJSON(outcomes)))))
    }

    func ingestAPNs(_ input: Operations.ingestAPNs.Input) async throws -> Operations.ingestAPNs.Output {
        guard case .json(let exchange) = input.body else { throw APIError.badRequest("expected application/json") }
        if let at = exchange.at { try Self.checkTime(at, field: "at") }
        let app = try Caller.app()
        let document: JSONValue
        do {
            document = try RawAppendBody.sentDocument ?? JSONParser.parse(Self.interchange(exchange))
        } catch let refused as APIError {
            throw refused
        } catch {
            throw APIError.badRequest("malformed JSON: \(error)", field: "body")
        }
        let start = ContinuousClock.now
        let outcomes = try await ledger.ingestAPNs(document, app: app)
        acknowledge(outcomes, since: start, app: app)
        return .ok(.init(body: .json(.rendered(AppendOutcome.batchJSON(outcomes)))))
    }

    /// The raw-body route's append (``RawAppendMiddleware``): `body` already passed every check the
    /// generated decoder and ``checkTime(_:field:)`` make, so only the ledger's own checks remain.
    func append(_ body: RawAppendBody, singleEvent: Bool) async throws -> [AppendOutcome] {
        try await append(
            body.events, sizes: Self.checkSizes, decode: EventCodec.decode, expected: body.expectedVersions,
            single: singleEvent)
    }

    /// Checks sizes, decodes and appends `inputs` (interchange events) in the caller's app. A single event is
    /// the request body itself, so the fields of its errors lose the batch's `events[0].` prefix.
    private func append<Input>(
        _ inputs: [Input], sizes: ([Input], Int) throws -> Void,
        decode: (Input) throws(EventDecodingError) -> LedgerEvent, expected: [String: Int64], single: Bool
    ) async throws -> [AppendOutcome] {
        let app = try Caller.app()
        let start = ContinuousClock.now
        let outcomes: [AppendOutcome]
        do {
            try sizes(inputs, ledger.maxEventBytes)
            let events = try Self.decode(inputs, decode)
            outcomes = try await ledger.append(
                decoded: events, expected: expected.mapValues { $0 == 0 ? ExpectedVersion.noStream : .exact($0) },
                app: app)
        } catch var error as LedgerError where !single && error.code == .conflict && error.field == "expectedVersion" {
            // A batch's versions come in `expectedVersions`, named as its 400s name an entry (found by a probe: the
            // 409 named the single route's query parameter).
            if let stream = error.stream { error.field = "expectedVersions['\(stream)']" }
            throw error
        } catch var error as LedgerError where single {
            if let field = error.field, field.hasPrefix("events[0]") {
                let rest = field.dropFirst("events[0]".count)
                error.field = rest.hasPrefix(".") ? String(rest.dropFirst()) : (rest.isEmpty ? nil : String(rest))
            }
            throw error
        }
        acknowledge(outcomes, since: start, app: app)
        return outcomes
    }

    /// Decodes every event, naming the refused one by its index in the request (422 `events[i].field`).
    private static func decode<Input>(
        _ events: [Input], _ decode: (Input) throws(EventDecodingError) -> LedgerEvent
    ) throws -> [LedgerEvent] {
        var decoded: [LedgerEvent] = []
        decoded.reserveCapacity(events.count)
        for (index, event) in events.enumerated() {
            do {
                decoded.append(try decode(event))
            } catch {
                let field = ["events[\(index)]", error.field].compactMap { $0 }.filter { !$0.isEmpty }
                throw LedgerError(.badInput, error.description, field: field.joined(separator: "."), cause: error)
            }
        }
        return decoded
    }

    private func acknowledge(_ outcomes: [AppendOutcome], since start: ContinuousClock.Instant, app: String) {
        let duration = ContinuousClock.now - start
        metrics.recordAppend(outcomes, duration: duration)
        logger.debug(
            "appended",
            metadata: [
                "ledger.app": .string(app), "ledger.events": .stringConvertible(outcomes.count),
                "ledger.last_position": .stringConvertible(outcomes.last?.position ?? 0),
            ]
        )
    }

    /// A generated request document as the interchange JSON the ledger's parsers read (the generated decoder
    /// has checked it against the schema; the ledger's decoder applies the domain rules).
    ///
    /// Foundation's encoder refuses one level of nesting fewer than its decoder reads (512), so a document the
    /// decoder took can fail here: that is the client's nesting, a 400 like the decoder's own refusal one level
    /// deeper (found: a content state 508 arrays deep answered 500, and `/v1/apns` a 400 of 7 KB of Swift types).
    static func interchange(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return try Array(encoder.encode(value))
        } catch {
            var refused = APIError.badRequest("malformed JSON: arrays and objects nested too deeply", field: "body")
            refused.code = "malformedJSON"
            throw refused
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

    /// Refuses a time that is neither an RFC 3339 string nor a number of Unix seconds, naming `field`
    /// (Schemas/openapi.yaml `Time`; the one rule of `Instant(parsing:)`).
    static func checkTime(_ time: Components.Schemas.Time, field: String) throws {
        let valid: Bool
        switch time {
        case .case1(let text): valid = Instant(rfc3339: text) != nil
        case .case2(let seconds): valid = seconds.isFinite && Instant(unixSeconds: JSONNumber(seconds)) != nil
        }
        guard valid else {
            throw APIError.badRequest(
                "field '\(field)' is neither an RFC 3339 time string nor a number of Unix seconds", field: field)
        }
    }
}
