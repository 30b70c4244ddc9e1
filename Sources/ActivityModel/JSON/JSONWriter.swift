import Formats

/// Compact JSON encoding: no insignificant whitespace, `/` not escaped, non-ASCII written as raw UTF-8.
///
/// This is the form the 4096-byte content-state rule measures and the form the ledger stores.
public struct JSONWriter: Sendable {
    public fileprivate(set) var bytes: [UInt8] = []

    public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    /// The writer's bytes, leaving it empty (a hand-over without a second owner).
    mutating func take() -> JSONWriter {
        var taken = JSONWriter(capacity: 0)
        swap(&taken, &self)
        return taken
    }

    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null: append("null")
        case .bool(let b): append(b ? "true" : "false")
        case .number(let n): bytes.append(contentsOf: n.text.utf8)
        case .string(let s): writeString(s)
        case .array(let a):
            bytes.append(UInt8(ascii: "["))
            for (i, element) in a.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                write(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let o):
            bytes.append(UInt8(ascii: "{"))
            for (i, member) in o.members.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                writeString(member.key)
                bytes.append(UInt8(ascii: ":"))
                write(member.value)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    mutating func append(_ literal: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    public mutating func writeString(_ string: String) {
        if string.utf8.withContiguousStorageIfAvailable({ writeString(utf8: $0) }) == nil {
            writeString(utf8: Array(string.utf8))
        }
    }

    mutating func writeString(utf8: some Collection<UInt8>) {
        JSONString.append(utf8, to: &bytes)
    }
}

/// Where the members of an object the ledger makes go, in order: a tree (`JSONObject`) or bytes
/// (`JSONObjectWriter`). One description of an object's members (e.g. `EventCodec.writeData`) serves both, so
/// a payload written straight to bytes is the one the tree would give.
public protocol JSONMemberSink {
    /// Appends a member; every key is added once.
    mutating func add(_ key: String, _ value: JSONValue)
    /// Appends a member whose value is an object made of what `body` adds.
    mutating func addObject(_ key: String, _ body: (inout Self) -> Void)
    /// Appends a member whose value may be held as text (a content state read in place).
    mutating func add(_ key: String, _ value: LazyJSON)
}

extension JSONMemberSink {
    public mutating func add(_ key: String, _ value: LazyJSON) { add(key, value.value) }
}

extension JSONObject: JSONMemberSink {
    public mutating func add(_ key: String, _ value: JSONValue) { members.append(Member(key: key, value: value)) }

    public mutating func addObject(_ key: String, _ body: (inout JSONObject) -> Void) {
        var inner = JSONObject()
        body(&inner)
        add(key, .object(inner))
    }
}

/// An object written member by member as compact JSON (`JSONWriter`'s form), with no tree in between.
public struct JSONObjectWriter: JSONMemberSink {
    private var writer: JSONWriter
    private var empty = true

    public init(capacity: Int = 256) {
        writer = JSONWriter(capacity: capacity)
        writer.bytes.append(UInt8(ascii: "{"))
    }

    private init(continuing writer: JSONWriter) {
        self.writer = writer
        self.writer.bytes.append(UInt8(ascii: "{"))
    }

    public mutating func add(_ key: String, _ value: JSONValue) {
        startMember(key)
        writer.write(value)
    }

    /// A value held as text that is already the writer's output (`LazyJSON.compactText`) is copied as it is,
    /// not parsed and written again.
    public mutating func add(_ key: String, _ value: LazyJSON) {
        guard let text = value.compactText else { return add(key, value.value) }
        startMember(key)
        writer.bytes.append(contentsOf: text)
    }

    public mutating func addObject(_ key: String, _ body: (inout JSONObjectWriter) -> Void) {
        startMember(key)
        // The bytes move into the inner object and back: never two owners, so no copy on append.
        var inner = JSONObjectWriter(continuing: writer.take())
        body(&inner)
        inner.writer.bytes.append(UInt8(ascii: "}"))
        writer = inner.writer.take()
    }

    /// The object's bytes, closed.
    public consuming func finish() -> [UInt8] {
        writer.bytes.append(UInt8(ascii: "}"))
        return writer.bytes
    }

    private mutating func startMember(_ key: String) {
        if !empty { writer.bytes.append(UInt8(ascii: ",")) }
        empty = false
        writer.writeString(key)
        writer.bytes.append(UInt8(ascii: ":"))
    }
}

extension JSONValue {
    /// Compact UTF-8 JSON bytes of this value.
    public var compactBytes: [UInt8] {
        var writer = JSONWriter()
        writer.write(self)
        return writer.bytes
    }

    /// Compact JSON text of this value.
    public var compactString: String { String(decoding: compactBytes, as: UTF8.self) }
}

extension JSONValue {
    /// `compactBytes.count` without building the bytes (the decoder measures every content-state).
    public var compactSize: Int {
        switch self {
        case .null: return 4
        case .bool(let b): return b ? 4 : 5
        case .number(let n): return n.text.utf8.count
        case .string(let s): return JSONValue.compactSize(of: s)
        case .array(let a):
            var size = 2 + max(0, a.count - 1)
            for element in a { size += element.compactSize }
            return size
        case .object(let o):
            var size = 2 + max(0, o.members.count - 1)
            for member in o.members { size += JSONValue.compactSize(of: member.key) + 1 + member.value.compactSize }
            return size
        }
    }

    static func compactSize(of string: String) -> Int {
        if let size = string.utf8.withContiguousStorageIfAvailable({ compactSize(of: $0) }) { return size }
        return compactSize(of: Array(string.utf8))
    }

    static func compactSize(of utf8: some Sequence<UInt8>) -> Int {
        JSONString.size(of: utf8)
    }
}
