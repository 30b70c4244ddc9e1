import ActivityModel
internal import Foundation

/// Times given as input: RFC 3339 (`2026-11-20T21:14:03.250Z`, any offset) or Unix seconds, exactly the forms
/// `Time` and `TimeParameter` of Schemas/openapi.yaml describe (schemathesis holds the two to each other).
enum TimeParameter {
    /// Parses `text`; throws a 400 naming `name`.
    static func parse(_ text: String, name: String) throws -> Date {
        if isUnixSeconds(text) {
            // At most 11 integer digits: always under the 1e11 s (year 5138) the ledger accepts.
            guard let seconds = Double(text), seconds.isFinite else {
                throw APIError.invalidParameter(name, "Unix seconds out of range")
            }
            return Date(timeIntervalSince1970: seconds)
        }
        if let date = rfc3339(text) { return date }
        throw APIError.invalidParameter(
            name, "'\(LogText.escaped(String(text.prefix(64))))' is neither an RFC 3339 time nor Unix seconds")
    }

    /// Parses an optional parameter.
    static func parse(_ text: String?, name: String) throws -> Date? {
        try text.map { try parse($0, name: name) }
    }

    /// The ledger's own RFC 3339 parser, so the server accepts exactly the times the ledger does, with the
    /// schema's limit of 9 fraction digits. It is also cheap: an `ISO8601DateFormatter` per call (ICU locale
    /// data) took a quarter of the server's CPU under load.
    static func rfc3339(_ text: String) -> Date? {
        guard text.utf8.count <= 35, fractionDigits(text) <= 9, let instant = Instant(rfc3339: text) else { return nil }
        return Date(timeIntervalSince1970: Double(instant.milliseconds) / 1000)
    }

    /// `-?[0-9]{1,11}(\.[0-9]+)?`: the Unix-seconds form of the schema's `TimeParameter`.
    private static func isUnixSeconds(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let isDigit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        let integer = bytes.prefix(while: isDigit)
        guard (1...11).contains(integer.count) else { return false }
        let rest = bytes.dropFirst(integer.count)
        if rest.isEmpty { return true }
        guard rest.first == UInt8(ascii: "."), rest.count > 1 else { return false }
        return rest.dropFirst().allSatisfy(isDigit)
    }

    /// Digits after the seconds' `.`, if any.
    private static func fractionDigits(_ text: String) -> Int {
        guard let dot = text.utf8.firstIndex(of: UInt8(ascii: ".")) else { return 0 }
        return text.utf8[text.utf8.index(after: dot)...].prefix { $0 >= 0x30 && $0 <= 0x39 }.count
    }
}
