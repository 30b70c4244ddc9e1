internal import Foundation

/// Makes untrusted text safe to put in a one-line log: control characters are escaped (a newline in a client's
/// field cannot start a forged line, a NUL is not written raw) and API key secrets are cut to a prefix.
enum LogText {
    /// `text` with C0/C1 controls, DEL, U+2028/U+2029 and the backslash escaped (`\n`, `\t`, `\r`, `\\`,
    /// `\u{0}`), so the escaped form reads back unambiguously; anything else unchanged.
    static func escaped(_ text: String) -> String {
        guard text.utf8.contains(where: needsLook) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A: result += "\\n"
            case 0x0D: result += "\\r"
            case 0x09: result += "\\t"
            case 0x5C: result += "\\\\"
            case 0x00..<0x20, 0x7F..<0xA0, 0x2028, 0x2029:
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Bytes that may start something ``escaped(_:)`` changes: ASCII controls, DEL, the backslash, and the
    /// lead bytes of U+0080…U+009F (0xC2) and U+2028/U+2029 (0xE2).
    private static func needsLook(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == 0x7F || byte == 0x5C || byte == 0xC2 || byte == 0xE2
    }

    /// `text` with every API key secret (`al_` and 40 or more base64url characters) cut to its first 6
    /// characters and its length (``Redaction/token(_:)``): the server never logs a secret on purpose, and this
    /// keeps one that slips into an error description out of the log too.
    static func redactingSecrets(_ text: String) -> String {
        guard text.utf8.count >= 43, text.contains("al_") else { return text }
        var result = ""
        var rest = Substring(text)
        while let range = rest.range(of: "al_") {
            let tail = rest[range.upperBound...]
            let run = tail.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
            result += rest[..<range.lowerBound]
            if run.count >= 40 {
                result += Redaction.token("al_" + run)
                rest = tail[run.endIndex...]
            } else {
                result += "al_"
                rest = tail
            }
        }
        return result + rest
    }
}
