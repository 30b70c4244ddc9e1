import Crypto
import Formats

/// UUID-shaped ids derived from a name (SHA-256, version-8 layout), so that re-ingesting the same thing — the same
/// APNs exchange, the same resync snapshot — yields the same event ids and is an idempotent no-op.
public enum DerivedID: Sendable {
    public static func uuid(_ name: String) -> String {
        CanonicalUUID.make(version: 8, from: SHA256.hash(data: Array(name.utf8)))  // version 8: custom
    }
}
