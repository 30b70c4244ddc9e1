/// An error of the event store: an opaque code plus what a person needs to act on it.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    /// Opaque so that adding a code breaks no caller.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Sendable {
            case versionConflict, idConflict, invalidEvent, corruptPayload, corruptDictionary, compression
            case invalidDigest, readOnly, schema, closed, busy, notALedger, outdated, storage
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// An expected version did not match the stream's version.
        public static let versionConflict = Code(.versionConflict)
        /// An id was re-sent with different content.
        public static let idConflict = Code(.idConflict)
        /// An event the store cannot take (e.g. an empty id or stream).
        public static let invalidEvent = Code(.invalidEvent)
        /// A stored payload does not decompress.
        public static let corruptPayload = Code(.corruptPayload)
        /// A dictionary is missing or unusable.
        public static let corruptDictionary = Code(.corruptDictionary)
        /// zstd refused to compress.
        public static let compression = Code(.compression)
        /// A digest string does not parse.
        public static let invalidDigest = Code(.invalidDigest)
        /// A write on a store opened read-only.
        public static let readOnly = Code(.readOnly)
        /// The file's schema is not one this version knows.
        public static let schema = Code(.schema)
        /// The store is shutting down and takes no more appends.
        public static let closed = Code(.closed)
        /// Another process held the file's write lock (or an exclusive lock) for longer than the busy timeout.
        public static let busy = Code(.busy)
        /// The file is an SQLite database (or something else) that is not an event store; it is never adopted.
        public static let notALedger = Code(.notALedger)
        /// The file lacks migrations this version needs, and the store was opened read-only.
        public static let outdated = Code(.outdated)
        /// SQLite could not open, read or write the file (permissions, disk full, I/O, corruption).
        public static let storage = Code(.storage)

        public var description: String { value.rawValue }
    }

    public let code: Code
    public let message: String
    /// The stream concerned, when there is one.
    public var stream: String?
    /// The event id concerned, when there is one.
    public var eventID: String?
    /// For `versionConflict`: the expected and actual versions (0 = no stream).
    public var expectedVersion: ExpectedVersion?
    public var actualVersion: Int64?

    public init(_ code: Code, _ message: String, stream: String? = nil, eventID: String? = nil) {
        self.code = code
        self.message = message
        self.stream = stream
        self.eventID = eventID
    }

    public var description: String { "\(code): \(message)" }

    package static func versionConflict(stream: String, expected: ExpectedVersion, actual: Int64) -> StoreError {
        let wanted: String
        switch expected {
        case .any: wanted = "any"
        case .noStream: wanted = "no stream"
        case .exact(let version): wanted = "version \(version)"
        }
        let found = actual == 0 ? "no stream" : "version \(actual)"
        var error = StoreError(
            .versionConflict, "stream '\(stream)' expected \(wanted) but is at \(found)", stream: stream)
        error.expectedVersion = expected
        error.actualVersion = actual
        return error
    }
}
