/// The interchange JSON of events (SPEC §2) and the Ledger's storage form.
///
/// Decoding refuses malformed JSON, unknown types, missing required fields, wrong field types, unknown enum
/// values, streams that do not fit the type and a key given twice in an object (interchange JSON only: the storage
/// form is the ledger's own), with an `EventDecodingError` naming the field. Unknown extra fields are ignored
/// (forward compatibility); JSON `null` counts as absent for optional fields.
public enum EventCodec: Sendable {
    /// One interchange JSON object (a JSON Lines line or an HTTP body element) → event.
    public static func decode(_ json: some Collection<UInt8>) throws(EventDecodingError) -> LedgerEvent {
        let result = json.withContiguousStorageIfAvailable { buffer in
            Result { () throws(EventDecodingError) -> LedgerEvent in try decode(bytes: buffer) }
        }
        if let result { return try result.get() }
        return try decode(Array(json))
    }

    public static func decode(_ json: [UInt8]) throws(EventDecodingError) -> LedgerEvent {
        let result = json.withUnsafeBufferPointer { buffer in
            Result { () throws(EventDecodingError) -> LedgerEvent in try decode(bytes: buffer) }
        }
        return try result.get()
    }

    public static func decode(_ json: UnsafeRawBufferPointer) throws(EventDecodingError) -> LedgerEvent {
        try decode(bytes: json.bindMemory(to: UInt8.self))
    }

    public static func decode(_ json: String) throws(EventDecodingError) -> LedgerEvent {
        try decode(Array(json.utf8))
    }

    /// The text read in place (`JSONObjectText`, the content state kept as text) when it has nothing the
    /// interchange rules could refuse; any other text is parsed into a tree and decoded from it, which words the
    /// refusal. Both read the fields through `FieldReader`, by the same rules (`InterchangeDecodeTests` holds the
    /// two to the same events and errors); building the tree was a third of an import's decoding thread.
    private static func decode(bytes: UnsafeBufferPointer<UInt8>) throws(EventDecodingError) -> LedgerEvent {
        if let text = JSONObjectText.whole(bytes, interchange: true) {
            return try decode(root: FieldReader(text: text, path: ""))
        }
        return try decode(try parse(bytes))
    }

    public static func decode(_ value: JSONValue) throws(EventDecodingError) -> LedgerEvent {
        let root = try FieldReader(value, path: "")
        // A key given twice means one thing to this reader (the first) and another to most (the last).
        if let problem = value.firstInterchangeProblem() { throw EventDecodingError(problem) }
        return try decode(root: root)
    }

    private static func decode(root: FieldReader) throws(EventDecodingError) -> LedgerEvent {
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
    ///
    /// The payload is read in place (`JSONObjectText`): only the values the event keeps are made. One that is not
    /// a valid JSON object is parsed whole instead, so that its error reads as any other malformed JSON's.
    public static func decodePayload(
        _ payload: some Collection<UInt8>, id: String, stream: String, type: String, at: Instant
    ) throws(EventDecodingError) -> LedgerEvent {
        let result = payload.withContiguousStorageIfAvailable { buffer in
            Result { () throws(EventDecodingError) -> LedgerEvent in
                try decodePayload(buffer: buffer, id: id, stream: stream, type: type, at: at)
            }
        }
        if let result { return try result.get() }
        return try decodePayload(Array(payload), id: id, stream: stream, type: type, at: at)
    }

    public static func decodePayload(
        _ payload: [UInt8], id: String, stream: String, type: String, at: Instant
    ) throws(EventDecodingError) -> LedgerEvent {
        let result = payload.withUnsafeBufferPointer { buffer in
            Result { () throws(EventDecodingError) -> LedgerEvent in
                try decodePayload(buffer: buffer, owner: payload, id: id, stream: stream, type: type, at: at)
            }
        }
        return try result.get()
    }

    public static func decodePayload(
        _ payload: UnsafeRawBufferPointer, id: String, stream: String, type: String, at: Instant
    ) throws(EventDecodingError) -> LedgerEvent {
        try decodePayload(buffer: payload.bindMemory(to: UInt8.self), id: id, stream: stream, type: type, at: at)
    }

    /// Storage form → event, with the row's stream and type already resolved: a reader of many rows of one
    /// stream (a query's fold input) resolves them once instead of once per row.
    public static func decodePayload(
        _ payload: [UInt8], id: String, stream: StreamName, type: EventType, at: Instant
    ) throws(EventDecodingError) -> LedgerEvent {
        let result = payload.withUnsafeBufferPointer { buffer in
            Result { () throws(EventDecodingError) -> LedgerEvent in
                try decodePayload(
                    root: try payloadReader(buffer, owner: payload), id: id, stream: stream, type: type, at: at)
            }
        }
        return try result.get()
    }

    private static func decodePayload(
        buffer: UnsafeBufferPointer<UInt8>, owner: [UInt8]? = nil, id: String, stream: String, type: String,
        at: Instant
    ) throws(EventDecodingError) -> LedgerEvent {
        let root = try payloadReader(buffer, owner: owner)
        guard let type = EventType(rawValue: type) else {
            throw EventDecodingError(
                code: .unknownType, field: "type", expected: FieldReader.oneOf(EventType.self), found: "\"\(type)\"")
        }
        guard let streamName = StreamName(stream) else {
            throw EventDecodingError(code: .wrongType, field: "stream", expected: streamExpectation, found: stream)
        }
        return try decodePayload(root: root, id: id, stream: streamName, type: type, at: at)
    }

    /// The payload's object read in place, or (not a valid JSON object) parsed, which throws the parser's error.
    /// `owner` is the array `buffer` lies in, if any (a state kept as text then keeps it instead of a copy).
    private static func payloadReader(_ buffer: UnsafeBufferPointer<UInt8>, owner: [UInt8]? = nil)
        throws(EventDecodingError) -> FieldReader
    {
        if let text = JSONObjectText.whole(buffer, owner: owner) { return FieldReader(text: text, path: "") }
        return try FieldReader(try parse(buffer), path: "")
    }

    /// The storage form's rules over a parsed tree (what a payload that is not one valid JSON object gets; the
    /// tests hold the in-place reading to it).
    static func decodePayload(parsed value: JSONValue, id: String, stream: StreamName, type: EventType, at: Instant)
        throws(EventDecodingError) -> LedgerEvent
    {
        try decodePayload(root: try FieldReader(value, path: ""), id: id, stream: stream, type: type, at: at)
    }

    private static func decodePayload(root: FieldReader, id: String, stream: StreamName, type: EventType, at: Instant)
        throws(EventDecodingError) -> LedgerEvent
    {
        let source = try root.optionalEnum("source", Source.self) ?? .server
        let data = try decodeData(try root.object("data"), type: type)
        return LedgerEvent(id: id, stream: stream, at: at, source: source, data: data)
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
