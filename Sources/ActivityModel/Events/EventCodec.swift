/// The interchange JSON of events (SPEC §2) and the Ledger's storage form.
///
/// Decoding refuses malformed JSON, unknown types, missing required fields, wrong field types, unknown enum
/// values, streams that do not fit the type and a key given twice in an object (interchange JSON only: the storage
/// form is the ledger's own), with an `EventDecodingError` naming the field. Unknown extra fields are ignored
/// (forward compatibility); JSON `null` counts as absent for optional fields.
public enum EventCodec: Sendable {
    /// One interchange JSON object (a JSON Lines line or an HTTP body element) → event.
    public static func decode(_ json: some Collection<UInt8>) throws(EventDecodingError) -> LedgerEvent {
        try decode(try parse(json))
    }

    public static func decode(_ json: [UInt8]) throws(EventDecodingError) -> LedgerEvent {
        try decode(try parse(json))
    }

    public static func decode(_ json: UnsafeRawBufferPointer) throws(EventDecodingError) -> LedgerEvent {
        try decode(try parse(json))
    }

    public static func decode(_ json: String) throws(EventDecodingError) -> LedgerEvent {
        try decode(Array(json.utf8))
    }

    public static func decode(_ value: JSONValue) throws(EventDecodingError) -> LedgerEvent {
        let root = try FieldReader(value, path: "")
        // A key given twice means one thing to this reader (the first) and another to most (the last).
        if let problem = value.firstInterchangeProblem() { throw EventDecodingError(problem) }
        let typeValue = try root.required("type", expected: FieldReader.oneOf(EventType.self))
        guard case .string(let typeName) = typeValue else {
            throw root.wrong("type", FieldReader.oneOf(EventType.self), typeValue)
        }
        guard let type = EventType(rawValue: typeName) else {
            throw EventDecodingError(
                code: .unknownType, field: "type", expected: FieldReader.oneOf(EventType.self),
                found: "\"\(typeName)\"")
        }
        let stream = try decodeStream(root, type: type)
        let at = try root.instant("at")
        let source = try root.optionalEnum("source", Source.self) ?? .server
        let id = try root.optionalString("id")
        if let id, id.isEmpty {
            throw EventDecodingError(code: .wrongType, field: "id", expected: "a non-empty string", found: "\"\"")
        }
        if let id, let scalar = Identifier.firstControlCharacter(id) {
            throw EventDecodingError(
                code: .wrongType, field: "id", expected: "no control characters", found: Identifier.describe(scalar))
        }
        let data = try decodeData(try root.object("data"), type: type)
        return LedgerEvent(id: id, stream: stream, at: at, source: source, data: data)
    }

    /// Storage form → event: `payload` is `{"source":…,"data":…}`, the rest comes from the row's columns.
    public static func decodePayload(
        _ payload: some Collection<UInt8>, id: String, stream: String, type: String, at: Instant
    ) throws(EventDecodingError) -> LedgerEvent {
        try decodePayload(value: try parse(payload), id: id, stream: stream, type: type, at: at)
    }

    static func decodePayload(value: JSONValue, id: String, stream: String, type: String, at: Instant)
        throws(EventDecodingError) -> LedgerEvent
    {
        guard let type = EventType(rawValue: type) else {
            throw EventDecodingError(
                code: .unknownType, field: "type", expected: FieldReader.oneOf(EventType.self), found: "\"\(type)\"")
        }
        guard let streamName = StreamName(stream) else {
            throw EventDecodingError(code: .wrongType, field: "stream", expected: streamExpectation, found: stream)
        }
        return try decodePayload(value: value, id: id, stream: streamName, type: type, at: at)
    }

    /// Storage form → event, with the row's stream and type already resolved: a reader of many rows of one
    /// stream (a query's fold input) resolves them once instead of once per row.
    public static func decodePayload(
        _ payload: [UInt8], id: String, stream: StreamName, type: EventType, at: Instant
    ) throws(EventDecodingError) -> LedgerEvent {
        try decodePayload(value: try parse(payload), id: id, stream: stream, type: type, at: at)
    }

    static func decodePayload(value: JSONValue, id: String, stream: StreamName, type: EventType, at: Instant)
        throws(EventDecodingError) -> LedgerEvent
    {
        let root = try FieldReader(value, path: "")
        let source = try root.optionalEnum("source", Source.self) ?? .server
        let data = try decodeData(try root.object("data"), type: type)
        return LedgerEvent(id: id, stream: stream, at: at, source: source, data: data)
    }

    public static func decodePayload(
        _ payload: [UInt8], id: String, stream: String, type: String, at: Instant
    ) throws(EventDecodingError) -> LedgerEvent {
        try decodePayload(value: try parse(payload), id: id, stream: stream, type: type, at: at)
    }

    public static func decodePayload(
        _ payload: UnsafeRawBufferPointer, id: String, stream: String, type: String, at: Instant
    ) throws(EventDecodingError) -> LedgerEvent {
        try decodePayload(value: try parse(payload), id: id, stream: stream, type: type, at: at)
    }

    static let streamExpectation = "activity:<id>, installation:<id> or channel:<id>"

    static func parse(_ json: some Collection<UInt8>) throws(EventDecodingError) -> JSONValue {
        do {
            return try JSONParser.parse(json)
        } catch {
            throw EventDecodingError(code: .malformedJSON, field: "", expected: error.description)
        }
    }

    static func decodeStream(_ root: FieldReader, type: EventType) throws(EventDecodingError) -> StreamName {
        let value = try root.required("stream", expected: streamExpectation)
        guard case .string(let string) = value else { throw root.wrong("stream", streamExpectation, value) }
        if let scalar = Identifier.firstControlCharacter(string) {
            throw EventDecodingError(
                code: .wrongType, field: "stream", expected: "no control characters",
                found: Identifier.describe(scalar))
        }
        guard let stream = StreamName(string) else {
            throw EventDecodingError(code: .wrongType, field: "stream", expected: streamExpectation, found: "\"\(string)\"")
        }
        guard type.allowedStreams.contains(stream.kind) else {
            let kinds = StreamKind.allCases.filter { type.allowedStreams.contains($0) }.map { "\($0.rawValue):<id>" }
            throw EventDecodingError(
                code: .streamMismatch, field: "stream",
                expected: "\(Self.article(kinds[0])) \(kinds.joined(separator: " or ")) stream for "
                    + "\(Self.article(type.rawValue)) \(type.rawValue) event",
                found: "\"\(string)\"")
        }
        return stream
    }

    /// "a" or "an" before a word of a message (`an activity:<id> stream for an update event`).
    static func article(_ word: String) -> String {
        guard let first = word.first else { return "a" }
        return "aeiou".contains(first) ? "an" : "a"
    }
}
