import ActivityModel

/// Times given as query parameters, under the one time rule of `Instant(parsing:)` (the CLI's options and the
/// events' `at` follow it too); `TimeParameter` in Schemas/openapi.yaml describes exactly that rule.
enum TimeParameter {
    /// Parses `text`; throws a 400 naming `name`.
    static func parse(_ text: String, name: String) throws -> Instant {
        guard let instant = Instant(parsing: text) else {
            throw APIError.invalidParameter(
                name,
                "'\(LogText.escaped(String(text.prefix(64))))' is neither an RFC 3339 time nor Unix seconds within the years 0000–9999"
            )
        }
        return instant
    }

    /// Parses an optional parameter.
    static func parse(_ text: String?, name: String) throws -> Instant? {
        try text.map { try parse($0, name: name) }
    }
}
