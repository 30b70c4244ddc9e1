import ActivityModel

/// Just enough JSON writing for generated corpora (compact, `/` not escaped) and RFC 3339 times.
public enum JSONText: Sendable {
    /// `value` as a JSON string literal.
    public static func quote(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20:
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// A compact JSON object from already-encoded member values, in the given order.
    public static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    /// Unix milliseconds as `2026-11-20T21:14:03.250Z` (the ledger's own formatting, `Instant.rfc3339`).
    public static func rfc3339(milliseconds: Int64) -> String {
        Instant(milliseconds: milliseconds).rfc3339
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var out = ""
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return out
    }
}
