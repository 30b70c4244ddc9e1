import Crypto
import Formats

/// `ActivityContent`: the dynamic state plus its stale date and relevance score.
public struct ActivityContent: Hashable, Sendable {
    /// The largest encoded content-state ActivityKit accepts, in bytes.
    public static let maximumStateSize = 4096

    public var state: JSONValue
    public var staleDate: Instant?
    public var relevanceScore: Double?
    /// Size of `state` as compact UTF-8 JSON — what the 4096-byte rule measures.
    public private(set) var encodedStateSize: Int

    public init(state: JSONValue, staleDate: Instant? = nil, relevanceScore: Double? = nil) {
        self.state = state
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
        self.encodedStateSize = state.compactSize
    }

    init(state: JSONValue, staleDate: Instant?, relevanceScore: Double?, encodedStateSize: Int) {
        self.state = state
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
        self.encodedStateSize = encodedStateSize
    }

    /// Content over 4096 encoded bytes is recorded but never displayed (`payloadTooLarge`).
    public var isTooLarge: Bool { encodedStateSize > Self.maximumStateSize }

    /// The content hash devices report in `observe.contentHash`: lowercase hex SHA-256 of the compact
    /// UTF-8 JSON of the content-state (not of stale date or relevance score).
    public var contentHash: String { ActivityContent.hash(of: state) }

    public static func hash(of state: JSONValue) -> String {
        SHA256.hash(data: state.compactBytes).withUnsafeBytes { Hex.encode($0) }
    }
}
