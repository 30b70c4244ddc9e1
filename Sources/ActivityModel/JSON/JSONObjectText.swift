import Foundation

/// One JSON object read in place: its members' keys and values as ranges of the text, each value validated by
/// `PayloadScanner` (the grammar `JSONParser` checks) but not built.
///
/// What `FieldReader` reads a stored event through: a query folds every event of an activity, and building the
/// JSON tree of each payload (its object, its `data`, its `content`), then taking it apart again, was about half of
/// a `state --at`. A member's value becomes a `JSONValue` only when the decoder asks for it, by `JSONParser` itself.
///
/// The text is scanned once: objects down to `indexedDepth` (a payload, its `data`, their `content`, `alert`,
/// `pushType`…) get their members listed in the same pass; deeper values (a content state) are validated and
/// measured as `JSONValue.compactSize` would, and left as ranges. The text must outlive the reader (`bytes` is lent,
/// never kept).
struct JSONObjectText {
    /// Offsets are kept in 32 bits (a text is at most an event, far below 2 GiB): 32 bytes a member instead of
    /// 64, so a whole event's list fits an allocation glibc serves from its per-thread cache.
    struct Member {
        private var keyStart: Int32
        private var keyEnd: Int32
        private var valueStart: Int32
        private var valueEnd: Int32
        private var storedSize: Int32
        private var storedNext: Int32
        private var storedFirstChild: Int32
        /// The key has escapes or non-ASCII bytes: compared as `String`s (by their text, with Unicode's canonical
        /// equivalence, as `JSONObject` compares keys) instead of by bytes.
        let keyEscaped: Bool

        init(key: Range<Int>, keyEscaped: Bool, value: Range<Int>, size: Int, next: Int, firstChild: Int) {
            keyStart = Int32(key.lowerBound)
            keyEnd = Int32(key.upperBound)
            valueStart = Int32(value.lowerBound)
            valueEnd = Int32(value.upperBound)
            storedSize = Int32(size)
            storedNext = Int32(next)
            storedFirstChild = Int32(firstChild)
            self.keyEscaped = keyEscaped
        }

        var key: Range<Int> { Int(keyStart)..<Int(keyEnd) }
        var value: Range<Int> {
            get { Int(valueStart)..<Int(valueEnd) }
            set {
                valueStart = Int32(newValue.lowerBound)
                valueEnd = Int32(newValue.upperBound)
            }
        }
        /// `JSONValue.compactSize` of the value; -1 for an object whose members were listed instead.
        var size: Int {
            get { Int(storedSize) }
            set { storedSize = Int32(newValue) }
        }
        /// The next member of the same object, -1 after the last.
        var next: Int {
            get { Int(storedNext) }
            set { storedNext = Int32(newValue) }
        }
        /// An object value's first member (-1 when it has none), `notListed` when its members were not listed.
        var firstChild: Int {
            get { Int(storedFirstChild) }
            set { storedFirstChild = Int32(newValue) }
        }
    }

    /// Texts this long or longer are not read in place (`whole` returns nil): offsets must fit `Member`'s 32 bits.
    static let maximumBytes = Int(Int32.max)

    static let notListed = -2
    /// Objects at this nesting level or above (the payload is 1) have their members listed.
    static let indexedDepth = 3

    let bytes: UnsafeBufferPointer<UInt8>
    /// The array `bytes` lies in, if the caller has one: a value kept as text (`LazyJSON`) keeps it instead of a copy.
    let owner: [UInt8]?
    /// The members of every listed object, each object's chained by `next`.
    private var members: [Member]
    /// This object's first member (-1 when empty).
    private let first: Int

    /// The object that is the whole of `bytes` (whitespace around it allowed); nil when `bytes` is not exactly one
    /// valid JSON object — the caller then parses it, which words the error. With `interchange`, also nil for a
    /// text the interchange rules might refuse (`PayloadScanner.init(interchange:)`).
    static func whole(
        _ bytes: UnsafeBufferPointer<UInt8>, owner: [UInt8]? = nil, interchange: Bool = false
    ) -> JSONObjectText? {
        guard bytes.count < maximumBytes else { return nil }
        var scanner = interchange ? PayloadScanner(interchange: bytes) : PayloadScanner(bytes)
        scanner.skipWhitespace()
        guard scanner.current == UInt8(ascii: "{") else { return nil }
        var members: [Member] = []
        members.reserveCapacity(24)
        guard let first = try? list(&scanner, depth: 1, into: &members) else { return nil }
        scanner.skipWhitespace()
        return scanner.atEnd ? JSONObjectText(bytes: bytes, owner: owner, members: members, first: first) : nil
    }

    private init(bytes: UnsafeBufferPointer<UInt8>, owner: [UInt8]?, members: [Member], first: Int) {
        self.bytes = bytes
        self.owner = owner
        self.members = members
        self.first = first
    }

    /// Lists the members of the object at the scanner (its `{`), at nesting level `depth`; its first member's index.
    private static func list(_ scanner: inout PayloadScanner, depth: Int, into members: inout [Member])
        throws(UnusualPayload) -> Int
    {
        guard try scanner.beginObject() else { return -1 }
        var first = -1
        var previous = -1
        let mark = scanner.keysMark
        repeat {
            scanner.skipWhitespace()
            let key = try scanner.stringRange(allowEscapes: true)
            if scanner.interchange { try scanner.noteKey(key, since: mark) }
            let keyEscaped = scanner.bytes[key].contains { $0 == UInt8(ascii: "\\") || $0 >= 0x80 }
            scanner.skipWhitespace()
            try scanner.expect(UInt8(ascii: ":"))
            scanner.skipWhitespace()
            let index = members.count
            let start = scanner.index
            members.append(
                Member(key: key, keyEscaped: keyEscaped, value: start..<start, size: -1, next: -1, firstChild: notListed))
            if previous >= 0 { members[previous].next = index } else { first = index }
            previous = index
            if depth < indexedDepth, scanner.current == UInt8(ascii: "{") {
                members[index].firstChild = try list(&scanner, depth: depth + 1, into: &members)
            } else {
                members[index].size = try scanner.skipValue(depth: depth + 1)
            }
            members[index].value = start..<scanner.index
        } while try scanner.nextMember()
        if scanner.interchange { scanner.forgetKeys(since: mark) }
        return first
    }

    /// The first member named `key` (a key given twice means the first, as `JSONObject`'s subscript reads it).
    func member(_ key: String) -> Member? {
        var key = key
        return key.withUTF8 { name in
            var index = first
            while index >= 0 {
                let member = members[index]
                if member.keyEscaped {
                    let quoted = UnsafeBufferPointer(rebasing: bytes[(member.key.lowerBound - 1)..<(member.key.upperBound + 1)])
                    if case .string(let text)? = try? JSONParser.parse(buffer: quoted),
                        text == String(decoding: name, as: UTF8.self)
                    {
                        return member
                    }
                } else if member.key.count == name.count,
                    name.count == 0 || memcmp(bytes.baseAddress! + member.key.lowerBound, name.baseAddress!, name.count) == 0
                {
                    return member
                }
                index = member.next
            }
            return nil
        }
    }

    func isNull(_ member: Member) -> Bool { bytes[member.value.lowerBound] == UInt8(ascii: "n") }

    /// The object that is `member`'s value, read in place; nil when the value is not an object.
    func object(_ member: Member) -> JSONObjectText? {
        guard bytes[member.value.lowerBound] == UInt8(ascii: "{") else { return nil }
        if member.firstChild != Self.notListed {
            return JSONObjectText(bytes: bytes, owner: owner, members: members, first: member.firstChild)
        }
        // Deeper than the listed levels (validated already): its members listed now, in place.
        var scanner = PayloadScanner(bytes)
        scanner.index = member.value.lowerBound
        var members: [Member] = []
        guard let first = try? Self.list(&scanner, depth: 1, into: &members) else { return nil }
        return JSONObjectText(bytes: bytes, owner: owner, members: members, first: first)
    }

    /// The member's value as a time, when it is a string of plain ASCII that is a valid RFC 3339 time, read from its
    /// bytes (nil otherwise: the caller makes the value, which words any refusal).
    func instant(_ member: Member) -> Instant? {
        let range = member.value
        guard bytes[range.lowerBound] == UInt8(ascii: "\""), range.count >= 2 else { return nil }
        let inside = UnsafeBufferPointer(rebasing: bytes[(range.lowerBound + 1)..<(range.upperBound - 1)])
        guard !inside.contains(where: { $0 == UInt8(ascii: "\\") || $0 >= 0x80 }) else { return nil }
        return Instant(rfc3339: inside)
    }

    /// The member's value kept as its text, when the scan measured it (not a listed object).
    func text(_ member: Member) -> LazyJSON? {
        guard member.size >= 0 else { return nil }
        if let owner { return LazyJSON(text: owner, range: member.value, size: member.size) }
        return LazyJSON(text: Array(bytes[member.value]), range: 0..<member.value.count, size: member.size)
    }

    /// The member's value: a string of plain ASCII (no escapes) from its bytes, which the scan validated; any other
    /// value made by `JSONParser`. (Ids, tokens and names are most of what a decoder reads.)
    func value(_ member: Member) throws(JSONParseError) -> JSONValue {
        let range = member.value
        if bytes[range.lowerBound] == UInt8(ascii: "\""), range.count >= 2 {
            let inside = UnsafeBufferPointer(rebasing: bytes[(range.lowerBound + 1)..<(range.upperBound - 1)])
            if !inside.contains(where: { $0 == UInt8(ascii: "\\") || $0 >= 0x80 }) {
                return .string(String(decoding: inside, as: UTF8.self))
            }
        }
        return try JSONParser.parse(buffer: UnsafeBufferPointer(rebasing: bytes[range]))
    }
}
