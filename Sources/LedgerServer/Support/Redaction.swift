/// Shortens a push token (or any secret) for logs: enough to correlate, never the whole value.
///
/// `Redaction.token("a1b2c3d4e5f6…")` is `"a1b2c3…(64)"`: the first six characters and the length.
public enum Redaction: Sendable {
    public static func token(_ token: String) -> String {
        token.count <= 8 ? "…(\(token.count))" : "\(token.prefix(6))…(\(token.count))"
    }
}
