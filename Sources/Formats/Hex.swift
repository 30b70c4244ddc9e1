/// Lower-case hexadecimal: the one spelling of bytes as text in the ledger (chain hashes and digests, content
/// hashes, UUIDs, API key ids, the `XX` of a `\u00XX` escape). Decoding also takes upper case (APNs tokens and
/// `\u` escapes come in either case).
///
/// This module sits below both ActivityModel and LedgerStore because both write hex and neither may import the
/// other (the domain knows no storage, the store no domain). Everything here is `@inlinable` byte loops: hex is on
/// hot paths (every stored UUID id a scan formats, every content hash an import computes).
public enum Hex {
    /// The lower-case digit of `nibble` (0–15). Computed, not looked up: a table in a static would cost a
    /// `swift_once` check per call.
    @inlinable @inline(__always)
    public static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "a") &- 10 &+ nibble
    }

    /// The value of the hex digit `byte` (either case); nil when it is not one.
    @inlinable @inline(__always)
    public static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte &- UInt8(ascii: "A") &+ 10
        default: nil
        }
    }

    /// Whether every byte of `utf8` is a hex digit (either case); true for none.
    @inlinable
    public static func isDigits(_ utf8: some Sequence<UInt8>) -> Bool {
        utf8.allSatisfy { value($0) != nil }
    }

    /// Appends the two digits of `byte`.
    @inlinable @inline(__always)
    public static func append(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(digit(byte >> 4))
        out.append(digit(byte & 0x0F))
    }

    /// Lower-case hex of `bytes`, two digits a byte.
    @inlinable
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            var index = 0
            for byte in bytes {
                out[index] = digit(byte >> 4)
                out[index + 1] = digit(byte & 0x0F)
                index += 2
            }
            return index
        }
    }

    /// The bytes spelled by `text`: an even number of hex digits, either case; nil for anything else.
    @inlinable
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = text.utf8
        guard utf8.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2)
        var high: UInt8?
        for byte in utf8 {
            guard let nibble = value(byte) else { return nil }
            if let first = high {
                out.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return out
    }
}
