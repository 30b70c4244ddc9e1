/// The fast path met something it does not handle (or the payload is invalid): the caller decides with the
/// full decoder instead, which also words the error.
package struct UnusualPayload: Error {
    @inlinable
    package init() {}
}

/// Walks one JSON text without building a tree, validating what it skips as strictly as `JSONParser` does
/// (RFC 8259 grammar, UTF-8, escapes, surrogate pairs, control characters) and measuring skipped values'
/// compact size as `JSONValue.compactSize` would. It gives up (`UnusualPayload`) rather than guess: escaped
/// keys, escaped strings it must return, nesting deeper than `JSONParser` allows.
package struct PayloadScanner {
    package let bytes: UnsafeBufferPointer<UInt8>
    package var index = 0
    /// Interchange JSON (`init(interchange:)`): what `JSONValue.firstInterchangeProblem` could refuse is unusual
    /// too — a key an object gives twice, a number with an exponent or of 300 characters or more — and so are keys
    /// with escapes or non-ASCII bytes (compared as strings, not bytes) and objects of more than
    /// `interchangeMembers` members (their keys are compared pairwise). A text with none of them has no
    /// interchange problem; the caller parses any other, and the tree's rules word the refusal.
    package private(set) var interchange = false
    /// The keys of the objects being walked, innermost object's last (interchange only).
    private var openKeys: [Range<Int>] = []

    package static let interchangeMembers = 64

    /// Below `JSONParser`'s 512 levels, with room for the levels above the value being skipped.
    package static let maximumDepth = 500

    @inlinable
    package init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    package init(interchange bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        interchange = true
        openKeys.reserveCapacity(Self.interchangeMembers)
    }

    @inlinable
    package var atEnd: Bool { index == bytes.count }

    @inlinable @inline(__always)
    package var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    @inlinable @inline(__always)
    package mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    @inlinable @inline(__always)
    package mutating func expect(_ byte: UInt8) throws(UnusualPayload) {
        guard index < bytes.count, bytes[index] == byte else { throw UnusualPayload() }
        index += 1
    }

    // MARK: Interchange keys

    /// Where the keys of an object about to be walked begin (`noteKey`, `forgetKeys`).
    package var keysMark: Int { openKeys.count }

    /// Interchange: a key of the object whose keys begin at `mark`; unusual when escaped, not ASCII, given
    /// before in the object, or past `interchangeMembers`.
    package mutating func noteKey(_ key: Range<Int>, since mark: Int) throws(UnusualPayload) {
        guard openKeys.count - mark < Self.interchangeMembers else { throw UnusualPayload() }
        var offset = key.lowerBound
        while offset < key.upperBound {
            if bytes[offset] >= 0x80 || bytes[offset] == UInt8(ascii: "\\") { throw UnusualPayload() }
            offset += 1
        }
        var other = mark
        while other < openKeys.count {
            if Self.same(bytes, openKeys[other], key) { throw UnusualPayload() }
            other += 1
        }
        openKeys.append(key)
    }

    @inline(__always)
    private static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ a: Range<Int>, _ b: Range<Int>) -> Bool {
        guard a.count == b.count else { return false }
        var offset = 0
        while offset < a.count {
            if bytes[a.lowerBound + offset] != bytes[b.lowerBound + offset] { return false }
            offset += 1
        }
        return true
    }

    /// Interchange: the object whose keys began at `mark` is walked.
    package mutating func forgetKeys(since mark: Int) {
        openKeys.removeLast(openKeys.count - mark)
    }

    // MARK: Objects, member by member

    /// Consumes `{`; false when the object is empty (its `}` consumed too).
    @inlinable
    package mutating func beginObject() throws(UnusualPayload) -> Bool {
        skipWhitespace()
        try expect(UInt8(ascii: "{"))
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return false
        }
        return true
    }

    /// Reads a member's key and its `:`; the key's bytes, unescaped keys only.
    @inlinable
    package mutating func key() throws(UnusualPayload) -> UnsafeBufferPointer<UInt8> {
        skipWhitespace()
        let range = try stringRange(allowEscapes: false)
        skipWhitespace()
        try expect(UInt8(ascii: ":"))
        skipWhitespace()
        return UnsafeBufferPointer(rebasing: bytes[range])
    }

    /// After a member's value: true when another member follows (`,` consumed), false at `}` (consumed).
    @inlinable
    package mutating func nextMember() throws(UnusualPayload) -> Bool {
        skipWhitespace()
        guard let byte = current else { throw UnusualPayload() }
        index += 1
        switch byte {
        case UInt8(ascii: ","): return true
        case UInt8(ascii: "}"): return false
        default: throw UnusualPayload()
        }
    }

    // MARK: Values the decoder reads

    /// `null`, consumed; false (nothing consumed) for any other value.
    @inlinable
    package mutating func null() throws(UnusualPayload) -> Bool {
        guard current == UInt8(ascii: "n") else { return false }
        _ = try skipValue(depth: 1)
        return true
    }

    /// A string without escapes (an escaped one is left to the full decoder).
    @inlinable
    package mutating func string() throws(UnusualPayload) -> String {
        let range = try stringRange(allowEscapes: false)
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// A number's literal text; nil (nothing consumed) when the value is not a number.
    @inlinable
    package mutating func numberText() throws(UnusualPayload) -> String? {
        guard let byte = current, byte == UInt8(ascii: "-") || isDigit(byte) else { return nil }
        let start = index
        try skipNumber()
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    /// A number written as up to 17 plain digits (optionally negative) and nothing else, consumed; its value is
    /// what `JSONNumber.int64Value` gives. Nil, nothing consumed, for any other value or form.
    @inlinable
    package mutating func plainInteger() -> Int64? {
        var end = index
        let negative = current == UInt8(ascii: "-")
        if negative { end += 1 }
        let digits = end
        var value: Int64 = 0
        while end < bytes.count, isDigit(bytes[end]), end - digits < 18 {
            value = value * 10 + Int64(bytes[end] &- UInt8(ascii: "0"))
            end += 1
        }
        let count = end - digits
        guard count > 0, count < 18, !(count > 1 && bytes[digits] == UInt8(ascii: "0")) else { return nil }
        if end < bytes.count {
            switch bytes[end] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
                return nil
            default: break
            }
        }
        index = end
        return negative ? -value : value
    }

    /// The text of `range` (a string's content, as `stringRange` returned it); unusual when it has escapes.
    package func text(_ range: Range<Int>) throws(UnusualPayload) -> String {
        let slice = UnsafeBufferPointer(rebasing: bytes[range])
        if slice.contains(UInt8(ascii: "\\")) { throw UnusualPayload() }
        return String(decoding: slice, as: UTF8.self)
    }

    // MARK: Skipping with validation

    /// Skips any value at nesting level `depth` (1 for a top-level value), returning its compact size.
    package mutating func skipValue(depth: Int) throws(UnusualPayload) -> Int {
        guard depth <= Self.maximumDepth, let byte = current else { throw UnusualPayload() }
        switch byte {
        case UInt8(ascii: "{"):
            index += 1
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                index += 1
                return 2
            }
            var size = 1
            let mark = keysMark
            while true {
                skipWhitespace()
                let key = index
                size += try skipString() + 1
                if interchange { try noteKey((key + 1)..<(index - 1), since: mark) }
                skipWhitespace()
                try expect(UInt8(ascii: ":"))
                skipWhitespace()
                size += try skipValue(depth: depth + 1)
                if try !nextMember() {
                    if interchange { forgetKeys(since: mark) }
                    return size + 1
                }
                size += 1
            }
        case UInt8(ascii: "["):
            index += 1
            skipWhitespace()
            if current == UInt8(ascii: "]") {
                index += 1
                return 2
            }
            var size = 1
            while true {
                skipWhitespace()
                size += try skipValue(depth: depth + 1)
                skipWhitespace()
                guard let next = current else { throw UnusualPayload() }
                index += 1
                if next == UInt8(ascii: "]") { return size + 1 }
                guard next == UInt8(ascii: ",") else { throw UnusualPayload() }
                size += 1
            }
        case UInt8(ascii: "\""):
            return try skipString()
        case UInt8(ascii: "t"): return try literal("true")
        case UInt8(ascii: "f"): return try literal("false")
        case UInt8(ascii: "n"): return try literal("null")
        default:
            let start = index
            try skipNumber()
            return index - start
        }
    }

    private mutating func literal(_ text: StaticString) throws(UnusualPayload) -> Int {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw UnusualPayload() }
        for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { throw UnusualPayload() }
        index += count
        return count
    }

    /// The number grammar of RFC 8259, as `JSONParser` checks it.
    @usableFromInline
    mutating func skipNumber() throws(UnusualPayload) {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, isDigit(first) else { throw UnusualPayload() }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let digit = current, isDigit(digit) else { throw UnusualPayload() }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            // A double may not hold it (`firstInterchangeProblem` converts such literals).
            if interchange { throw UnusualPayload() }
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let digit = current, isDigit(digit) else { throw UnusualPayload() }
            skipDigits()
        }
        if interchange, index - start >= 300 { throw UnusualPayload() }
    }

    private mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    @usableFromInline
    func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }
}
