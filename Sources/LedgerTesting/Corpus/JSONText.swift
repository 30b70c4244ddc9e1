import ActivityModel
import Formats

/// Just enough JSON writing for generated corpora (compact, `/` not escaped) and RFC 3339 times.
public enum JSONText: Sendable {
    /// `value` as a JSON string literal (`JSONString`, the ledger's own escaping).
    public static func quote(_ value: String) -> String { JSONString.quoted(value) }

    /// A compact JSON object from already-encoded member values, in the given order.
    public static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    /// Unix milliseconds as `2026-11-20T21:14:03.250Z` (the ledger's own formatting, `Instant.rfc3339`).
    public static func rfc3339(milliseconds: Int64) -> String {
        Instant(milliseconds: milliseconds).rfc3339
    }
}
