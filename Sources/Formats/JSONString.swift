/// JSON string literals as the ledger writes them, the one escaping rule: `"` and `\` escaped, control
/// characters as `\b \f \n \r \t` or `\u00XX`, everything else (`/`, DEL, non-ASCII UTF-8) as is. That is what
/// `JSONEncoder` writes with `.withoutEscapingSlashes`, and the compact form the 4096-byte content-state rule
/// measures, so the size (`size(of:)`) and the writing share `width(of:)`.
public enum JSONString {
    /// The bytes `byte` takes inside a literal: 1, 2 (`\"`, `\\`, a short control escape) or 6 (`\u00XX`).
    @inlinable @inline(__always)
    public static func width(of byte: UInt8) -> Int {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x08, 0x09, 0x0A, 0x0C, 0x0D: 2
        case 0..<0x20: 6
        default: 1
        }
    }

    /// The size of the literal of `utf8`, quotes included, without writing it.
    @inlinable
    public static func size(of utf8: some Sequence<UInt8>) -> Int {
        var size = 2
        for byte in utf8 { size += width(of: byte) }
        return size
    }

    /// Appends `utf8` as a literal, quotes included.
    @inlinable
    public static func append(_ utf8: some Sequence<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        let contiguous: Void? = utf8.withContiguousStorageIfAvailable { buffer in
            // Runs of bytes written as they are go in one copy each (most strings are one run).
            var start = 0
            for index in buffer.indices where width(of: buffer[index]) != 1 {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<index]))
                appendEscaped(buffer[index], to: &out)
                start = index + 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start...]))
        }
        if contiguous == nil {
            for byte in utf8 {
                if width(of: byte) == 1 { out.append(byte) } else { appendEscaped(byte, to: &out) }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// The escape of a byte whose width is not 1.
    @inlinable
    static func appendEscaped(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(byte)
        case 0x08: out.append(UInt8(ascii: "b"))
        case 0x09: out.append(UInt8(ascii: "t"))
        case 0x0A: out.append(UInt8(ascii: "n"))
        case 0x0C: out.append(UInt8(ascii: "f"))
        case 0x0D: out.append(UInt8(ascii: "r"))
        default:
            out.append(UInt8(ascii: "u"))
            out.append(UInt8(ascii: "0"))
            out.append(UInt8(ascii: "0"))
            Hex.append(byte, to: &out)
        }
    }

    /// `text` as a literal, quotes included.
    public static func quoted(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 2)
        append(text.utf8, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
