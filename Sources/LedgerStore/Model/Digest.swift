import Formats

/// A position of the log and its chain hash: `POSITION:HEX`. Taken earlier, it proves later that the log up
/// to that position is unchanged (`EventStore.verify(upTo:)`).
public struct Digest: Sendable, Hashable, CustomStringConvertible, LosslessStringConvertible {
    /// Last position covered (0 for an empty log).
    public var position: Int64
    /// Chain hash at `position` (32 zero bytes for an empty log).
    public var hash: [UInt8]

    public init(position: Int64, hash: [UInt8]) {
        self.position = position
        self.hash = hash
    }

    /// Parses `POSITION:HEX`: 1–18 decimal digits, a colon, 64 hex digits (the `digest` parameter's pattern in
    /// Schemas/openapi.yaml; the CLI's `--digest` takes the same).
    public init?(_ description: String) {
        let parts = description.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...18).contains(parts[0].utf8.count),
            parts[0].utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let position = Int64(parts[0]),
            let hash = Hex.decode(parts[1]), hash.count == 32
        else { return nil }
        self.init(position: position, hash: hash)
    }

    /// Lower-case hex of `hash`.
    public var hex: String { Hex.encode(hash) }

    public var description: String { "\(position):\(hex)" }
}
