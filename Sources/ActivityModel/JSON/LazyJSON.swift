import Synchronization

/// A JSON value held as a tree, or as the validated text a stored payload holds it in and made into a tree only
/// when read.
///
/// A fold reads every content of an activity and answers with one or two of them; parsing each content state
/// into a tree, and tearing it down again, was about a fifth of a `state --at`. Equality and hashing are the
/// value's (`JSONValue`'s), whichever way it is held.
public struct LazyJSON: Hashable, Sendable {
    private enum Storage: Sendable {
        case tree(JSONValue)
        case text(StoredText)
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
        storage = .text(StoredText(bytes: bytes, range: range, compact: compact))
        compactSize = size
    }

    /// The value as a tree (parsed from the text the first time it is read, when held as text).
    public var value: JSONValue {
        switch storage {
        case .tree(let value): value
        case .text(let text): text.value
        }
    }

    /// `value.compactBytes`; the text itself when it is already compact.
    public var compactBytes: [UInt8] { compactText.map(Array.init) ?? value.compactBytes }

    /// `bytes[range]` is the value's validated text, when it is held as text.
    package var heldText: (bytes: [UInt8], range: Range<Int>)? {
        if case .text(let text) = storage { return (text.bytes, text.range) }
        return nil
    }

    /// The text, when it is held as text and is exactly what `JSONWriter` writes of the value.
    var compactText: ArraySlice<UInt8>? {
        if case .text(let text) = storage, text.compact { return text.bytes[text.range] }
        return nil
    }

    public static func == (lhs: LazyJSON, rhs: LazyJSON) -> Bool { lhs.value == rhs.value }

    public func hash(into hasher: inout Hasher) { hasher.combine(value) }
}

/// A value's text and, once read, its tree: a timeline renders the same shown content at many of its steps, and
/// parses it once.
private final class StoredText: Sendable {
    /// `bytes[range]`, a value `PayloadScanner` validated.
    let bytes: [UInt8]
    let range: Range<Int>
    /// The text is exactly what `JSONWriter` writes of its parse.
    let compact: Bool
    private let parsed = Mutex<JSONValue?>(nil)

    init(bytes: [UInt8], range: Range<Int>, compact: Bool) {
        self.bytes = bytes
        self.range = range
        self.compact = compact
    }

    var value: JSONValue {
        if let value = parsed.withLock({ $0 }) { return value }
        // Validated by the same grammar when it was read, so this parse does not fail; null would show if it did.
        let value = (try? JSONParser.parse(bytes[range])) ?? .null
        parsed.withLock { $0 = value }
        return value
    }
}
