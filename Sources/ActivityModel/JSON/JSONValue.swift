/// Arbitrary JSON, as carried by content-state and attributes.
///
/// Objects keep their key order and numbers keep their literal text, so that re-encoding a value yields the
/// bytes that were sent (the 4096-byte content-state rule measures those bytes).
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

/// A JSON number kept as its literal text (validated by the parser or produced from a Swift number).
public struct JSONNumber: Hashable, Sendable, CustomStringConvertible {
    /// The literal, e.g. `"0.0"`, `"1700000000"`, `"-1.5e3"`.
    public let text: String

    /// A literal already known to be a valid JSON number (the parser's output).
    public init(literal: String) { self.text = literal }

    public init(_ value: Int64) { self.text = String(value) }
    public init(_ value: Int) { self.text = String(value) }

    /// Integral doubles print without a fraction (`80`, not `80.0`).
    public init(_ value: Double) {
        if value.isFinite, value.rounded() == value, abs(value) < 9.0e15 {
            self.text = String(Int64(value))
        } else if value.isFinite {
            self.text = "\(value)"
        } else {
            self.text = "0"
        }
    }

    public var description: String { text }
    public var doubleValue: Double { Double(text) ?? .nan }

    /// The value as an integer when the literal is integral (`1700000000` or `1700000000.0`).
    public var int64Value: Int64? {
        if let exact = Int64(text) { return exact }
        guard let double = Double(text), double.isFinite, double.rounded() == double,
            abs(double) < 9.2e18
        else { return nil }
        return Int64(double)
    }
}

/// A JSON object's members in their original order. Lookups scan linearly: event objects are small.
public struct JSONObject: Hashable, Sendable {
    public struct Member: Hashable, Sendable {
        public var key: String
        public var value: JSONValue
        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    public var members: [Member]

    public init(_ members: [Member] = []) { self.members = members }

    public init(_ pairs: KeyValuePairs<String, JSONValue>) {
        self.members = pairs.map { Member(key: $0.key, value: $0.value) }
    }

    public subscript(key: String) -> JSONValue? {
        get {
            for member in members where member.key == key { return member.value }
            return nil
        }
        set {
            if let index = members.firstIndex(where: { $0.key == key }) {
                if let newValue { members[index].value = newValue } else { members.remove(at: index) }
            } else if let newValue {
                members.append(Member(key: key, value: newValue))
            }
        }
    }

    public var keys: [String] { members.map(\.key) }
    public var isEmpty: Bool { members.isEmpty }
}

extension JSONValue {
    public static func int(_ value: Int64) -> JSONValue { .number(JSONNumber(value)) }
    public static func double(_ value: Double) -> JSONValue { .number(JSONNumber(value)) }
    public static func object(_ pairs: KeyValuePairs<String, JSONValue>) -> JSONValue { .object(JSONObject(pairs)) }

    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    public var objectValue: JSONObject? { if case .object(let o) = self { o } else { nil } }
    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var numberValue: JSONNumber? { if case .number(let n) = self { n } else { nil } }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var isNull: Bool { if case .null = self { true } else { false } }

    /// A short name of the JSON kind, for error messages.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral, ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(nilLiteral: ()) { self = .null }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements.map { JSONObject.Member(key: $0.0, value: $0.1) }))
    }
}
