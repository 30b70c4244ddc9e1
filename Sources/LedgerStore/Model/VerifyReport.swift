/// The outcome of recomputing the hash chain.
public struct VerifyReport: Sendable, Hashable {
    /// True when every checked row (and the digest, if given) matched.
    public var ok: Bool
    /// Rows checked.
    public var checked: Int64
    /// Digest at the last good row checked.
    public var lastGood: Digest
    /// First position whose row does not match its hash (or is missing), when `ok` is false.
    public var firstBadPosition: Int64?
    /// Why that row is bad, in a sentence.
    public var reason: String?
    /// With a digest: whether the log up to its position is the one it names (nil without one). Proven even when a
    /// later row is bad — then `ok` is false, since the whole chain is checked either way.
    public var digestProven: Bool?

    public init(ok: Bool, checked: Int64, lastGood: Digest, firstBadPosition: Int64? = nil, reason: String? = nil) {
        self.ok = ok
        self.checked = checked
        self.lastGood = lastGood
        self.firstBadPosition = firstBadPosition
        self.reason = reason
    }
}
