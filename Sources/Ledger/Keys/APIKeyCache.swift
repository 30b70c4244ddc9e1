import Synchronization

/// Remembers recently authenticated keys so that a hot client does not cost a SQLite read per request (the HTTP
/// API and the APNs proxy check keys through it).
///
/// Only successful lookups are cached, for `ttl` (half a second by default): a key revoked with `keys revoke`,
/// in this process or another, stops working in a running server within `ttl`; a key just created works at once.
/// Re-reading each hot key twice a second costs one indexed SQLite lookup per key per `ttl`, nothing measurable
/// next to a request; a shared "keys changed" counter would need a change to the key table's owner.
public final class APIKeyCache: Sendable {
    private struct Entry {
        var key: APIKey
        var expires: ContinuousClock.Instant
    }

    private let store: APIKeyStore
    private let ttl: Duration
    private let entries = Mutex<[String: Entry]>([:])
    /// Bounds memory when many distinct keys are used; the cache simply starts over.
    private let capacity = 10_000

    public init(store: APIKeyStore, ttl: Duration) {
        self.store = store
        self.ttl = ttl
    }

    /// The key of `secret` if this cache has it and it is not stale, without reading the key table; nil otherwise
    /// (unknown, or not looked up within `ttl`: call ``authenticate(_:)``).
    public func cached(_ secret: String) -> APIKey? {
        guard ttl > .zero, let entry = entries.withLock({ $0[secret] }), entry.expires > ContinuousClock.now else { return nil }
        return entry.key
    }

    /// The live key whose secret is `secret`, or nil.
    public func authenticate(_ secret: String) throws -> APIKey? {
        if let key = cached(secret) { return key }
        let now = ContinuousClock.now
        guard let key = try store.authenticate(secret) else { return nil }
        if ttl > .zero {
            entries.withLock { entries in
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
                entries[secret] = Entry(key: key, expires: now + ttl)
            }
        }
        return key
    }
}
