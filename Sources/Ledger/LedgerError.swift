/// An error of the ledger application, with an opaque code so that adding a case breaks no caller,
/// and a message a person can act on (it names the line, field, stream or parameter).
public struct LedgerError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The caller's input is wrong (malformed JSON, schema violation, bad parameter).
        public static let badInput = Code("badInput")
        /// The activity, event or run asked for does not exist (at the time asked).
        public static let notFound = Code("notFound")
        /// An expected version did not match, or an id was re-sent with other content.
        public static let conflict = Code("conflict")
        /// The caller may not touch this stream (it belongs to another app).
        public static let forbidden = Code("forbidden")
        /// The ledger file is damaged or cannot be used.
        public static let storage = Code("storage")
    }

    public var code: Code
    public var message: String
    /// For imports: the 1-based line that was refused.
    public var line: Int?
    /// The field path or parameter that was wrong, when known.
    public var field: String?
    /// For version conflicts: the stream and the versions expected (0: no stream) and found.
    public var stream: String?
    public var expectedVersion: Int64?
    public var actualVersion: Int64?
    /// The lower layer's error this one reports (a `StoreError`, an SQLite `DatabaseError`, an
    /// `EventDecodingError`…), kept for logs and for callers that need more than the message.
    public var cause: (any Error)?

    public init(_ code: Code, _ message: String, line: Int? = nil, field: String? = nil, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.line = line
        self.field = field
        self.cause = cause
    }

    public var description: String {
        if let line { return "line \(line): \(message)" }
        return message
    }
}
