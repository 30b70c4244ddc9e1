import Foundation

/// The rule for names a client chooses — stream ids, event ids, apps: any Unicode text in normalization form C
/// (NFC) but control characters.
///
/// C0 controls (NUL included), DEL and C1 controls are refused at every door: SQLite keeps text up to a NUL, a
/// newline forges log lines, and U+001F separates an app from a name in storage (`Namespaced`). A name must be in
/// NFC: Swift compares strings by canonical equivalence ("é" as one scalar equals "e" + U+0301) where SQLite and
/// PostgreSQL compare bytes, so two spellings of one name would be one name in memory and two in the file (found:
/// both spellings in one batch filed the second event under the first's stream and broke the chain). Everything
/// else (U+2028, emoji, a combining mark first) is stored exactly as sent.
public enum Identifier {
    /// The longest name, in UTF-8 bytes: an app, and every name an event gives or refers to (stream ids,
    /// installations, channels, tokens, `attributesType`). Stored qualified (`app` U+001F `name`), two of them stay
    /// under PostgreSQL's B-tree limit of 2,704 bytes per index entry (found by a probe: a 2,690-character stream
    /// name was stored by SQLite and a 503 naming the database's user, host and index on PostgreSQL, and a ledger
    /// holding one could not be copied there).
    public static let maxBytes = 1024

    /// The reason a name over `maxBytes` is refused, for a message after its field.
    public static let tooLong = "longer than \(maxBytes) bytes"

    /// Why `name` cannot be a name, or nil: the one rule for names at every door — no control character, in NFC,
    /// at most `maxBytes` (callers put their field before it: "field 'stream': …", "app: …").
    public static func problem(_ name: String) -> String? {
        // Most names are printable ASCII: no control character and in NFC, read on their bytes once.
        if isPrintableASCII(name) { return name.utf8.count > maxBytes ? tooLong : nil }
        if let scalar = firstControlCharacter(name) { return "control character \(describe(scalar)) is not allowed" }
        if !isNFC(name) { return notNFC }
        if name.utf8.count > maxBytes { return tooLong }
        return nil
    }

    /// The first control character of `text`, if any.
    public static func firstControlCharacter(_ text: String) -> Unicode.Scalar? {
        // Printable ASCII holds none: most names are checked on their bytes, without decoding a scalar.
        if isPrintableASCII(text) { return nil }
        return text.unicodeScalars.first { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    /// Whether every byte of `text` is printable ASCII (0x20–0x7E), read from its contiguous UTF-8 where it has
    /// it (names are checked once per decoded event; the UTF-8 view's own iteration was ~2 % of a query).
    static func isPrintableASCII(_ text: String) -> Bool {
        let printable = text.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes where byte < 0x20 || byte >= 0x7F { return false }
            return true
        }
        return printable ?? text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }

    /// Whether `text` is in Unicode normalization form C (every ASCII text is).
    public static func isNFC(_ text: String) -> Bool {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return true }
        return text.precomposedStringWithCanonicalMapping.utf8.elementsEqual(text.utf8)
    }

    /// The reason a name that is not in NFC is refused, for a message after its field.
    public static let notNFC = "not in Unicode normalization form C (NFC): send its composed form"

    /// `U+0000`-style name of a scalar, for messages (the scalar itself would not print).
    public static func describe(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
