import Formats

/// Compact JSON encoding: no insignificant whitespace, `/` not escaped, non-ASCII written as raw UTF-8.
///
/// This is the form the 4096-byte content-state rule measures and the form the ledger stores.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

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
