import ActivityModel
internal import Foundation

/// Times given as input: RFC 3339 (`2026-11-20T21:14:03.250Z`, any offset) or Unix seconds.
enum TimeParameter {
    /// Parses `text`; throws a 400 naming `name`.
    static func parse(_ text: String, name: String) throws -> Date {
        if let seconds = Double(text), seconds.isFinite, !text.isEmpty, text.first!.isNumber || text.first == "-" {
            guard abs(seconds) < 1e11 else { throw APIError.invalidParameter(name, "Unix seconds out of range") }
            return Date(timeIntervalSince1970: seconds)
        }
        if let date = rfc3339(text) { return date }
        throw APIError.invalidParameter(name, "'\(text.prefix(64))' is neither an RFC 3339 time nor Unix seconds")
    }

    /// Parses an optional parameter.
    static func parse(_ text: String?, name: String) throws -> Date? {
        try text.map { try parse($0, name: name) }
    }

    /// The ledger's own RFC 3339 parser, so the server accepts exactly the times the ledger does. It is also
    /// cheap: an `ISO8601DateFormatter` per call (ICU locale data) took a quarter of the server's CPU under load.
    private static func rfc3339(_ text: String) -> Date? {
        guard text.count <= 40, let instant = Instant(rfc3339: text) else { return nil }
        return Date(timeIntervalSince1970: Double(instant.milliseconds) / 1000)
    }
}
