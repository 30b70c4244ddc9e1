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
            let hash = HexCoding.decode(parts[1]), hash.count == 32
        else { return nil }
        self.init(position: position, hash: hash)
    }

    /// Lower-case hex of `hash`.
    public var hex: String { HexCoding.encode(hash) }

    public var description: String { "\(position):\(hex)" }
}

enum HexCoding {
    private static let digits = Array("0123456789abcdef".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ text: Substring) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
