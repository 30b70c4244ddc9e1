/// A JSON value held as a tree, or as the validated text a stored payload holds it in and made into a tree only
/// when read.
///
/// A fold reads every content of an activity and answers with one or two of them; parsing each content state
/// into a tree, and tearing it down again, was about a fifth of a `state --at`. Equality and hashing are the
/// value's (`JSONValue`'s), whichever way it is held.
public struct LazyJSON: Hashable, Sendable {
    private enum Storage: Hashable, Sendable {
        case tree(JSONValue)
        /// `bytes[range]`, a value `PayloadScanner` validated; `compact` when the text is exactly what `JSONWriter`
        /// writes of its parse.
        case text(bytes: [UInt8], range: Range<Int>, compact: Bool)
    }

    private let storage: Storage
    /// `JSONValue.compactSize` of the value: the size the 4096-byte content-state rule measures.
    public let compactSize: Int

    public init(_ value: JSONValue) {
        storage = .tree(value)
        compactSize = value.compactSize
    }

    /// `bytes[range]`, a JSON value validated and measured (`size`, its compact size) by `PayloadScanner`.
    init(text bytes: [UInt8], range: Range<Int>, size: Int) {
        // The writer writes every character of a string as itself except `"`, `\` and controls, which it escapes:
        // a text the size of its compact form (no whitespace; nothing the writer writes longer) without a backslash
        // (no escape, which could differ from the writer's in its letters) is the writer's output.
        let compact = size == range.count && !bytes[range].contains(UInt8(ascii: "\\"))
        storage = .text(bytes: bytes, range: range, compact: compact)
        compactSize = size
    }

    /// The value as a tree (parsed from the text each time it is read, when held as text).
    public var value: JSONValue {
        switch storage {
        case .tree(let value):
            return value
        case .text(let bytes, let range, _):
            // Validated by the same grammar when it was read, so this parse does not fail; null would show if it did.
            return (try? JSONParser.parse(bytes[range])) ?? .null
        }
    }

    /// `value.compactBytes`; the text itself when it is already compact.
    public var compactBytes: [UInt8] {
        if case .text(let bytes, let range, true) = storage { return Array(bytes[range]) }
        return value.compactBytes
    }

    public static func == (lhs: LazyJSON, rhs: LazyJSON) -> Bool { lhs.value == rhs.value }

    public func hash(into hasher: inout Hasher) { hasher.combine(value) }
}
