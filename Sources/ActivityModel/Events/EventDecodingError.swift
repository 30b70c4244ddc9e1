/// Why an interchange JSON object was refused (SPEC §2), naming the field and what was expected.
public struct EventDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Opaque so that new codes break no caller.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        public static let malformedJSON = Code("malformedJSON")
        public static let unknownType = Code("unknownType")
        public static let missingField = Code("missingField")
        public static let wrongType = Code("wrongType")
        public static let unknownValue = Code("unknownValue")
        public static let streamMismatch = Code("streamMismatch")

        public var description: String { name }
    }

    public var code: Code
    /// Dotted path of the offending field (`data.content.state`); empty for the whole document.
    public var field: String
    /// What a valid event has there, e.g. "an object", "one of app, server, apns, device, ledger".
    public var expected: String
    /// What was found instead, when that helps ("a string", "missing", "\"phone\"").
    public var found: String?

    public init(code: Code, field: String, expected: String, found: String? = nil) {
        self.code = code
        self.field = field
        self.expected = expected
        self.found = found
    }

    /// Interchange JSON that breaks RFC 7493 (`JSONValue.firstInterchangeProblem`).
    public init(_ problem: JSONValue.InterchangeProblem) {
        self.init(code: .wrongType, field: problem.field, expected: problem.expected, found: problem.found)
    }

    public var description: String {
        switch code {
        case .malformedJSON: return "malformed JSON: \(expected)"
        case .missingField: return "missing required field '\(field)' (expected \(expected))"
        case .unknownType: return "unknown event type \(found ?? "") at '\(field)' (expected \(expected))"
        default:
            let got = found.map { ", got \($0)" } ?? ""
            return "field '\(field)': expected \(expected)\(got)"
        }
    }
}
