/// How event ids are stored: a canonical lower-case UUID as its 16 bytes, any other id as its text. An id in an
/// app's namespace (`app` U+001F `id`, see `Namespaced`) whose id is a canonical UUID is the UUID's 16 bytes
/// followed by the app's UTF-8 bytes, so the unique index keeps ids unique per app.
///
/// Only the canonical spelling is packed, so reading a row back always yields the exact id that was
/// appended (the id is part of the hash chain).
enum StoredEventID: Hashable {
    case uuid([UInt8])
    case text(String)

    init(_ id: String) {
        let (app, bare) = Namespaced.split(id)
        if var bytes = Self.packUUID(bare) {
            bytes.append(contentsOf: app.utf8)
            self = .uuid(bytes)
        } else {
            self = .text(id)
        }
    }

    private static func packUUID(_ id: String) -> [UInt8]? {
        let utf8 = id.utf8
        guard utf8.count == 36 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(16)
        var high: UInt8? = nil
        for (offset, c) in utf8.enumerated() {
            if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
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

    /// The stored bytes of an id back in the client's spelling (a 16-byte UUID, lower-case with dashes).
    static func format(_ bytes: UnsafeRawBufferPointer) -> String {
        guard bytes.count >= 16 else { return HexCoding.encode(Array(bytes)) }
        guard bytes.count == 16 else {
            let app = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[16...]), as: UTF8.self)
            return Namespaced.qualify(format(UnsafeRawBufferPointer(rebasing: bytes[..<16])), app: app)
        }
        return String(unsafeUninitializedCapacity: 36) { out in
            var index = 0
            for (offset, byte) in bytes.enumerated() {
                if offset == 4 || offset == 6 || offset == 8 || offset == 10 {
                    out[index] = UInt8(ascii: "-")
                    index += 1
                }
                out[index] = hexDigit(byte >> 4)
                out[index + 1] = hexDigit(byte & 0x0f)
                index += 2
            }
            return index
        }
    }

    /// A lower-case hex digit, computed (a lookup table in a static would cost a `swift_once` check per call on
    /// the scan's hot path).
    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") - 10 + nibble
    }
}
