import Formats

/// Strings: the checks `JSONParser.parseString` makes (no raw control characters, valid escapes and surrogate
/// pairs, well-formed UTF-8 by Unicode's table 3-7) and the size `JSONWriter` would write them in.
extension PayloadScanner {
    /// Consumes a string; the range of its content (between the quotes). With `allowEscapes` false, a string
    /// containing a backslash is unusual.
    @inlinable
    package mutating func stringRange(allowEscapes: Bool) throws(UnusualPayload) -> Range<Int> {
        let start = index + 1
        let (escaped, _) = try scanString()
        if escaped && !allowEscapes { throw UnusualPayload() }
        return start..<(index - 1)
    }

    /// Consumes a string; its compact size (`JSONValue.compactSize(of:)` of its unescaped text).
    package mutating func skipString() throws(UnusualPayload) -> Int {
        try scanString().size
    }

    /// Consumes a string at `index` (which must be at its opening quote).
    @usableFromInline
    mutating func scanString() throws(UnusualPayload) -> (escaped: Bool, size: Int) {
        try expect(UInt8(ascii: "\""))
        var escaped = false
        var size = 2
        while index < bytes.count {
            // Plain ASCII runs first, eight bytes at a time up to the first byte that needs a look; one by one
            // only in the payload's last few bytes.
            let run = index
            index = Self.plainWords(bytes, from: index)
            while index < bytes.count {
                let plain = bytes[index]
                guard plain >= 0x20, plain < 0x80, plain != UInt8(ascii: "\""), plain != UInt8(ascii: "\\") else {
                    break
                }
                index += 1
            }
            size += index - run
            guard index < bytes.count else { break }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return (escaped, size)
            }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                size += try escape()
            } else if byte < 0x20 {
                throw UnusualPayload()
            } else {
                size += try utf8Sequence()
            }
        }
        throw UnusualPayload()
    }

    /// The offset of the first byte from `start` that is not plain string content — a quote or a backslash (a zero
    /// byte after XOR), a control character (a borrow out of the byte minus 0x20) or a non-ASCII byte (its high
    /// bit) — read eight bytes at a time; near the end, where a word would run past it, the offset of that word.
    /// Each test is exact for the word's lowest flagged byte (a borrow only spreads upwards, from a byte that is
    /// itself one of them), and in little-endian order that is the first: the scan jumps straight to it instead of
    /// stepping to it byte by byte (most strings end inside their first word).
    @inline(__always)
    static func plainWords(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = bytes.baseAddress else { return start }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var index = start
        while index + 8 <= bytes.count {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            let special =
                (((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | (word &- (ones &* 0x20)) | word)
                & highs
            guard special == 0 else { return index + special.trailingZeroBitCount >> 3 }
            index += 8
        }
        return index
    }

    /// One well-formed UTF-8 sequence of 2–4 bytes (Unicode table 3-7); its length.
    private mutating func utf8Sequence() throws(UnusualPayload) -> Int {
        let lead = bytes[index]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: throw UnusualPayload()
        }
        guard index + length <= bytes.count else { throw UnusualPayload() }
        let second = bytes[index + 1]
        guard second >= low, second <= high else { throw UnusualPayload() }
        for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 { throw UnusualPayload() }
        index += length
        return length
    }

    /// One escape sequence at `index` (its backslash); the compact size of the character it stands for.
    private mutating func escape() throws(UnusualPayload) -> Int {
        guard index + 1 < bytes.count else { throw UnusualPayload() }
        let escaped = bytes[index + 1]
        index += 2
        // The width of the character an escape stands for is `JSONString`'s, as `JSONWriter` would write it.
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return JSONString.width(of: escaped)
        case UInt8(ascii: "b"): return JSONString.width(of: 0x08)
        case UInt8(ascii: "f"): return JSONString.width(of: 0x0C)
        case UInt8(ascii: "n"): return JSONString.width(of: 0x0A)
        case UInt8(ascii: "r"): return JSONString.width(of: 0x0D)
        case UInt8(ascii: "t"): return JSONString.width(of: 0x09)
        case UInt8(ascii: "u"):
            let scalar = try hex4()
            switch scalar {
            case 0xD800...0xDBFF:
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else { throw UnusualPayload() }
                index += 2
                guard (0xDC00...0xDFFF).contains(try hex4()) else { throw UnusualPayload() }
                return 4
            case 0xDC00...0xDFFF:
                throw UnusualPayload()
            case 0..<0x80: return JSONString.width(of: UInt8(scalar))
            case 0..<0x800: return 2
            default: return 3
            }
        default:
            throw UnusualPayload()
        }
    }

    private mutating func hex4() throws(UnusualPayload) -> UInt32 {
        guard index + 4 <= bytes.count else { throw UnusualPayload() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = Hex.value(bytes[index]) else { throw UnusualPayload() }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }
}
