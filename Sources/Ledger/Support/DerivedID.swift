import Crypto

/// UUID-shaped ids derived from a name (SHA-256, version-8 layout), so that re-ingesting the same thing — the same
/// APNs exchange, the same resync snapshot — yields the same event ids and is an idempotent no-op.
public enum DerivedID: Sendable {
    public static func uuid(_ name: String) -> String {
        var bytes = Array(SHA256.hash(data: Array(name.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80  // version 8: custom
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 4122 variant
        let hex = bytes.map { byte -> String in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
        }.joined()
        let chars = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(chars[$0]) }.joined(separator: "-")
    }
}
