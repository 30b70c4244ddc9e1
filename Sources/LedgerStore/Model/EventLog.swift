/// The log as every backend keeps it (SPEC §6): gapless positions from 1, stream versions checked by expected
/// versions, ids unique (a re-sent id with the same content is a no-op, with other content a conflict), and the
/// SHA-256 chain over the logical fields (`ChainHasher`), so the same events give the same hashes on every backend.
///
/// Two implementations: `EventStore` (one SQLite file, the default) and `PostgresEventLog` (target
/// LedgerPostgres, for several servers on one database). `EventLogConformanceTests` holds both to the same
/// assertions. Names are stored as given: app namespaces (`Namespaced`) are the caller's qualification.
public protocol EventLog: Sendable {
    /// Where the log lives, as a person names it: the file's path, or the URL without its password.
    var location: String { get }

    /// Appends a batch atomically and returns once it is durable. Throws `StoreError` `versionConflict` or
    /// `idConflict` (nothing of the batch written), or `invalidEvent` for an empty or NUL-bearing name.
    func append(_ batch: AppendBatch) async throws -> AppendResult

    /// The last position (0 for an empty log).
    func lastPosition() async throws -> Int64

    /// The event stored under `id`, if any.
    func event(id: String) async throws -> RecordedEvent?

    /// Events of `stream` from `fromVersion` on, in version order, with their hashes.
    func events(stream: String, fromVersion: Int64) async throws -> [RecordedEvent]

    /// At most `limit` events after `position`, in position order, with their hashes.
    func events(after position: Int64, limit: Int) async throws -> [RecordedEvent]

    /// The last position and its chain hash.
    func digest() async throws -> Digest

    /// Recomputes the chain over every event (or up to `digest`'s position, which must then carry the hash the
    /// chain reaches there) and names the first bad position.
    func verify(upTo digest: Digest?) async throws -> VerifyReport

    /// The first position whose hash covers app-qualified names (0 or 1: all of them). Only SQLite files written
    /// before apps were namespaces have rows before it; a copy carries it over (`adoptNamespacedFrom`).
    func namespacedFrom() async throws -> Int64

    /// Sets ``namespacedFrom()`` on an empty log, so that a copy of an old file hashes its early rows as the
    /// original did. Throws `invalidEvent` when the log holds events.
    func adoptNamespacedFrom(_ position: Int64) async throws
}

/// The backend a `--db` value names: a `postgresql://` (or `postgres://`) URL, else an SQLite file path.
public enum LedgerLocation: Sendable, Hashable {
    case sqlite(path: String)
    case postgres(url: String)

    public init(_ text: String) {
        let lower = text.lowercased()
        if lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://") {
            self = .postgres(url: text)
        } else {
            self = .sqlite(path: text)
        }
    }
}
