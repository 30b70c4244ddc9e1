/// How event ids are stored: a canonical lower-case UUID as its 16 bytes, any other id as its text.
///
/// Only the canonical spelling is packed, so reading a row back always yields the exact id that was
/// appended (the id is part of the hash chain).
enum StoredEventID: Hashable {
    case uuid([UInt8])
    case text(String)

    init(_ id: String) {
        self = Self.packUUID(id).map(StoredEventID.uuid) ?? .text(id)
    }

    /// The id as the client spelled it.
    var string: String {
        switch self {
        case .text(let text): return text
        case .uuid(let bytes): return Self.format(bytes)
        }
    }

    private static let dashOffsets: Set<Int> = [8, 13, 18, 23]

    private static func packUUID(_ id: String) -> [UInt8]? {
        let utf8 = id.utf8
        guard utf8.count == 36 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(16)
        var high: UInt8? = nil
        for (offset, c) in utf8.enumerated() {
            if dashOffsets.contains(offset) {
                guard c == UInt8(ascii: "-") else { return nil }
                continue
            }
            let nibble: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = c - UInt8(ascii: "a") + 10
            default: return nil  // upper case stays text so that it round-trips exactly
            }
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return bytes
    }

    static func format(_ bytes: [UInt8]) -> String {
        let hex = HexCoding.encode(bytes)
        var out = ""
        out.reserveCapacity(36)
        for (offset, c) in hex.enumerated() {
            if offset == 8 || offset == 12 || offset == 16 || offset == 20 { out.append("-") }
            out.append(c)
        }
        return out
    }
}
