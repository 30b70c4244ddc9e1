/// Why the ledger refused a request; each code maps to one HTTP status.
///
/// A struct around an opaque code so that new cases break no caller. Messages name the field, line or
/// parameter at fault; they are shown to the client as they are.
public struct LedgerBackendError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of refusal.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Base: String, Sendable, Hashable {
            case badInput, malformedJSON, invalidEvent, notFound, conflict, unavailable
        }
        fileprivate let base: Base

        /// A parameter or document is malformed (400).
        public static let badInput = Code(base: .badInput)
        /// A body that is not JSON at all (400).
        public static let malformedJSON = Code(base: .malformedJSON)
        /// A well-formed event or document the ledger refuses in the domain (422).
        public static let invalidEvent = Code(base: .invalidEvent)
        /// No such activity, update or run for this app (404).
        public static let notFound = Code(base: .notFound)
        /// A stream's version is not the expected one (409).
        public static let conflict = Code(base: .conflict)
        /// The ledger cannot take the request now, e.g. shutting down (503).
        public static let unavailable = Code(base: .unavailable)

        public var description: String { base.rawValue }
    }

    public var code: Code
    /// What went wrong, naming the field/line/parameter.
    public var message: String
    /// The field, parameter or line the error is about, e.g. `events[3].data.timestamp`.
    public var field: String?
    /// For conflicts: the stream and its versions.
    public var stream: String?
    public var expectedVersion: Int64?
    public var actualVersion: Int64?

    public init(code: Code, message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }

    /// A malformed parameter or document (400).
    public static func badInput(field: String, _ message: String) -> Self {
        Self(code: .badInput, message: message, field: field)
    }

    /// A body (or part of one, `field`) that does not parse as JSON (400).
    public static func malformedJSON(field: String, _ message: String) -> Self {
        Self(code: .malformedJSON, message: message, field: field)
    }

    /// Event number `index` (0-based, in request order) is refused; `field` is inside that event.
    public static func invalidEvent(index: Int?, field: String?, message: String) -> Self {
        let path = [index.map { "events[\($0)]" }, field].compactMap { $0 }.joined(separator: ".")
        return Self(code: .invalidEvent, message: message, field: path.isEmpty ? nil : path)
    }

    /// A well-formed document the ledger refuses (422), e.g. a truth line.
    public static func unprocessable(field: String?, _ message: String) -> Self {
        Self(code: .invalidEvent, message: message, field: field)
    }

    /// Nothing by that name for this app (404); `what` reads like "no such activity RIDE-1".
    public static func notFound(_ what: String) -> Self {
        Self(code: .notFound, message: what)
    }

    /// An expected-version mismatch (409).
    public static func conflict(stream: String, expected: Int64, actual: Int64) -> Self {
        var error = Self(
            code: .conflict,
            message: "stream \(stream) is at version \(actual), expected \(expected)",
            field: "expectedVersions"
        )
        error.stream = stream
        error.expectedVersion = expected
        error.actualVersion = actual
        return error
    }

    public var description: String { "\(code): \(message)" }
}
