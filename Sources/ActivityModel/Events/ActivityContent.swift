import Crypto
import Formats

/// `ActivityContent`: the dynamic state plus its stale date and relevance score.
public struct ActivityContent: Hashable, Sendable {
    /// The largest encoded content-state ActivityKit accepts, in bytes.
    public static let maximumStateSize = 4096

    /// The content state, as sent (key order and number literals kept). A decoded stored event holds it as the
    /// payload's text, parsed when read (`LazyJSON`).
    public var state: JSONValue {
        get { storedState.value }
        set { storedState = LazyJSON(newValue) }
    }
    public var storedState: LazyJSON
    public var staleDate: Instant?
    public var relevanceScore: Double?
    /// Size of `state` as compact UTF-8 JSON — what the 4096-byte rule measures.
    public var encodedStateSize: Int { storedState.compactSize }

    public init(state: JSONValue, staleDate: Instant? = nil, relevanceScore: Double? = nil) {
        self.init(storedState: LazyJSON(state), staleDate: staleDate, relevanceScore: relevanceScore)
    }

    public init(storedState: LazyJSON, staleDate: Instant? = nil, relevanceScore: Double? = nil) {
        self.storedState = storedState
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
    }

    /// Content over 4096 encoded bytes is recorded but never displayed (`payloadTooLarge`).
    public var isTooLarge: Bool { encodedStateSize > Self.maximumStateSize }

    /// The content hash devices report in `observe.contentHash`: lowercase hex SHA-256 of the compact
    /// UTF-8 JSON of the content-state (not of stale date or relevance score).
    public var contentHash: String { ActivityContent.hash(of: storedState) }

    public static func hash(of state: JSONValue) -> String { hash(compactBytes: state.compactBytes) }

    static func hash(of state: LazyJSON) -> String { hash(compactBytes: state.compactBytes) }

    private static func hash(compactBytes: [UInt8]) -> String {
        SHA256.hash(data: compactBytes).withUnsafeBytes { Hex.encode($0) }
    }
}
