/// Reads the fields of one JSON object, producing `EventDecodingError`s that name the full field path.
///
/// The object is a tree (`JSONValue`) or, for a stored payload, text read in place (`JSONObjectText`): a member's
/// value is then made only when asked for, and a nested object is read in place too. The field rules are the same
/// for both; only where a value comes from differs.
struct FieldReader {
    private enum Members {
        case tree(JSONObject)
        case text(JSONObjectText)
    }

    private let members: Members
    /// The path is `prefix`.`key` (or `prefix` alone), joined only when asked: a field path is needed for errors,
    /// and joining one for every nested object decoded was ~2 % of a query's decoding.
    private let prefix: String
    private let key: String?

    var path: String { key.map { Self.joined(prefix, $0) } ?? prefix }

    /// `key` under `path` (`data` + `content` → `data.content`; at the root, `key` alone).
    private static func joined(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    init(_ value: JSONValue, path: String) throws(EventDecodingError) {
        try self.init(value, prefix: path, key: nil)
    }

    /// A stored payload's object, read in place.
    init(text: JSONObjectText, path: String) {
        self.init(members: .text(text), prefix: path, key: nil)
    }

    private init(members: Members, prefix: String, key: String?) {
        self.members = members
        self.prefix = prefix
        self.key = key
    }

    private init(_ value: JSONValue, prefix: String, key: String?) throws(EventDecodingError) {
        guard case .object(let object) = value else {
            let path = key.map { Self.joined(prefix, $0) } ?? prefix
            throw EventDecodingError(
                code: .wrongType, field: path.isEmpty ? "$" : path, expected: "an object", found: value.kindName)
        }
        self.init(members: .tree(object), prefix: prefix, key: key)
    }

    func fieldPath(_ key: String) -> String { Self.joined(path, key) }

    /// The value, or nil when absent or JSON null (optional fields may be sent as null).
    func optional(_ key: String) throws(EventDecodingError) -> JSONValue? {
        switch members {
        case .tree(let object):
            guard let value = object[key], !value.isNull else { return nil }
            return value
        case .text(let text):
            guard let member = text.member(key), !text.isNull(member) else { return nil }
            return try Self.made(text, member)
        }
    }

    /// Whether `key` is present and not JSON null, without making its value (an end's or an update's `content`
    /// and `alert` were parsed whole into a tree only to be asked this).
    func has(_ key: String) -> Bool {
        switch members {
        case .tree(let object):
            return object[key].map { !$0.isNull } ?? false
        case .text(let text):
            return text.member(key).map { !text.isNull($0) } ?? false
        }
    }

    /// `text`'s member as a value; it was validated when `text` was read, so a failure here means the scanner and
    /// the parser disagree, reported as the parser's error.
    private static func made(_ text: JSONObjectText, _ member: JSONObjectText.Member) throws(EventDecodingError) -> JSONValue {
        do {
            return try text.value(member)
        } catch {
            throw EventDecodingError(code: .malformedJSON, field: "", expected: error.description)
        }
    }

    /// An object member kept as its text, to be parsed only if read (`LazyJSON`); nil when this object is a tree,
    /// or when the member is absent or not an object (`required` then words the error).
    func storedObject(_ key: String) -> LazyJSON? {
        guard case .text(let text) = members, let member = text.member(key),
            text.bytes[member.value.lowerBound] == UInt8(ascii: "{")
        else { return nil }
        return text.text(member)
    }

    func required(_ key: String, expected: @autoclosure () -> String) throws(EventDecodingError) -> JSONValue {
        guard let value = try optional(key) else {
            throw EventDecodingError(code: .missingField, field: fieldPath(key), expected: expected())
        }
        return value
    }

    func wrong(_ key: String, _ expected: String, _ value: JSONValue) -> EventDecodingError {
        EventDecodingError(code: .wrongType, field: fieldPath(key), expected: expected, found: value.kindName)
    }

    func string(_ key: String) throws(EventDecodingError) -> String {
        let value = try required(key, expected: "a string")
        guard case .string(let s) = value, !s.isEmpty else { throw wrong(key, "a non-empty string", value) }
        return s
    }

    /// A name another event can refer to (an activity, installation or channel id): non-empty, no control
    /// characters (`Identifier`).
    func name(_ key: String) throws(EventDecodingError) -> String {
        try checkedName(key, try string(key))
    }

    /// A name that must also be in Unicode NFC (names outside events: snapshots; events' names are checked where
    /// they are stored, `Ledger.newEvent`).
    func nfcName(_ key: String) throws(EventDecodingError) -> String {
        let name = try name(key)
        guard Identifier.isNFC(name) else {
            throw EventDecodingError(code: .wrongType, field: fieldPath(key), expected: "a name in NFC", found: Identifier.notNFC)
        }
        guard name.utf8.count <= Identifier.maxBytes else {
            throw EventDecodingError(
                code: .wrongType, field: fieldPath(key), expected: "a name of at most \(Identifier.maxBytes) bytes",
                found: "\(name.utf8.count) bytes")
        }
        return name
    }

    func optionalName(_ key: String) throws(EventDecodingError) -> String? {
        guard let name = try optionalString(key) else { return nil }
        return try checkedName(key, name)
    }

    private func checkedName(_ key: String, _ name: String) throws(EventDecodingError) -> String {
        if let scalar = Identifier.firstControlCharacter(name) {
            throw EventDecodingError(
                code: .wrongType, field: fieldPath(key), expected: "no control characters",
                found: Identifier.describe(scalar))
        }
        return name
    }

    func optionalString(_ key: String) throws(EventDecodingError) -> String? {
        guard let value = try optional(key) else { return nil }
        guard case .string(let s) = value else { throw wrong(key, "a string", value) }
        return s
    }

    func object(_ key: String) throws(EventDecodingError) -> FieldReader {
        if case .text(let text) = members, let member = text.member(key), let object = text.object(member) {
            return FieldReader(members: .text(object), prefix: path, key: key)
        }
        return try FieldReader(try required(key, expected: "an object"), prefix: path, key: key)
    }

    func int(_ key: String, expected: String = "an integer") throws(EventDecodingError) -> Int64 {
        let value = try required(key, expected: expected)
        guard case .number(let n) = value, let int = n.int64Value else { throw wrong(key, expected, value) }
        return int
    }

    func optionalInt(_ key: String, expected: String = "an integer") throws(EventDecodingError) -> Int64? {
        guard let value = try optional(key) else { return nil }
        guard case .number(let n) = value, let int = n.int64Value else { throw wrong(key, expected, value) }
        return int
    }

    func optionalDouble(_ key: String) throws(EventDecodingError) -> Double? {
        guard let value = try optional(key) else { return nil }
        guard case .number(let n) = value else { throw wrong(key, "a number", value) }
        let double = n.doubleValue
        guard double.isFinite else {
            // 1e400 is a JSON number, but not one a Double (nor ActivityKit) can hold.
            throw EventDecodingError(code: .wrongType, field: fieldPath(key), expected: "a finite number", found: "a number out of range")
        }
        return double
    }

    /// A time: RFC 3339 string or Unix seconds.
    func optionalInstant(_ key: String) throws(EventDecodingError) -> Instant? {
        if let instant = textInstant(key) { return instant }
        guard let value = try optional(key) else { return nil }
        return try instant(value, key: key)
    }

    func instant(_ key: String) throws(EventDecodingError) -> Instant {
        if let instant = textInstant(key) { return instant }
        return try instant(try required(key, expected: Self.timeExpectation), key: key)
    }

    /// A valid RFC 3339 time read straight from the text's bytes (no `String` made for it); nil for anything else,
    /// which the value's own path reads and words.
    private func textInstant(_ key: String) -> Instant? {
        guard case .text(let text) = members, let member = text.member(key) else { return nil }
        return text.instant(member)
    }

    static let timeExpectation = "an RFC 3339 time or a number of Unix seconds"

    func instant(_ value: JSONValue, key: String) throws(EventDecodingError) -> Instant {
        switch value {
        case .string(let s):
            guard let instant = Instant(rfc3339: s) else {
                throw EventDecodingError(
                    code: .wrongType, field: fieldPath(key), expected: Self.timeExpectation, found: "\"\(s)\"")
            }
            return instant
        case .number(let n):
            guard let instant = Instant(unixSeconds: n) else { throw wrong(key, Self.timeExpectation, value) }
            return instant
        default:
            throw wrong(key, Self.timeExpectation, value)
        }
    }

    /// A string that must be one of an enum's raw values; anything else is refused like a wrong type.
    func optionalEnum<E: RawRepresentable & CaseIterable>(_ key: String, _: E.Type) throws(EventDecodingError) -> E?
    where E.RawValue == String {
        guard let value = try optional(key) else { return nil }
        return try enumValue(value, key: key, E.self)
    }

    func requiredEnum<E: RawRepresentable & CaseIterable>(_ key: String, _: E.Type) throws(EventDecodingError) -> E
    where E.RawValue == String {
        let value = try required(key, expected: Self.oneOf(E.self))
        return try enumValue(value, key: key, E.self)
    }

    func enumValue<E: RawRepresentable & CaseIterable>(_ value: JSONValue, key: String, _: E.Type)
        throws(EventDecodingError) -> E
    where E.RawValue == String {
        guard case .string(let s) = value else { throw wrong(key, Self.oneOf(E.self), value) }
        guard let e = E(rawValue: s) else {
            throw EventDecodingError(
                code: .unknownValue, field: fieldPath(key), expected: Self.oneOf(E.self), found: "\"\(s)\"")
        }
        return e
    }

    static func oneOf<E: RawRepresentable & CaseIterable>(_: E.Type) -> String where E.RawValue == String {
        "one of " + E.allCases.map(\.rawValue).joined(separator: ", ")
    }
}
