import ActivityModel
import Formats
import Foundation
import GRDB
import LedgerStore
import NIOPosix
import Logging
import Synchronization

/// One stored event, decoded, with what the log knows about it.
public struct LoggedEvent: Sendable, Hashable {
    public var position: Int64
    public var version: Int64
    public var recordedAt: Instant
    public var hash: [UInt8]
    public var event: LedgerEvent

    public var positioned: PositionedEvent { PositionedEvent(position: position, event: event) }

    /// The interchange object of SPEC §2 plus where the log keeps it: `position`, `version`, `recordedAt`, `hash`.
    public var json: JSONValue {
        guard case .object(var object) = EventCodec.json(event) else { return EventCodec.json(event) }
        object.members += [
            .init(key: "position", value: .int(position)), .init(key: "version", value: .int(version)),
            .init(key: "recordedAt", value: .string(recordedAt.rfc3339)),
            .init(key: "hash", value: .string(Hex.encode(hash))),
        ]
        return .object(object)
    }
}

extension Ledger {
    /// Every event that bears on an activity (`key`: its projection key, `Namespaced`-qualified by its app): its
    /// own stream, plus the channel streams it is subscribed to (read through the stream index, never a scan).
    /// Sealed events carry their chain hash only with `hashes` (a timeline shows it; reconciliation does not
    /// need it, and it costs decoding each segment they are in: `EventStore.events(in:stream:fromVersion:hashes:)`).
    func relevantEvents(_ db: any LedgerSnapshot, key: String, hashes: Bool) throws -> [LoggedEvent] {
        var recorded = try db.events(stream: Self.stream(.activity, key: key), hashes: hashes)
        for channel in try db.channels(following: key) {
            recorded += try db.events(stream: Self.stream(.channel, key: channel), hashes: hashes)
        }
        var decoder = StoredEventDecoder()
        return readable(recorded) { try Self.logged($0, decoder: &decoder) }
    }

    /// `transform` of every row that decodes. A row that does not (only a file written before every door
    /// validated can hold one) is logged and left out, so one bad row never takes its activity, a list or the
    /// feed down with it.
    func readable<T>(_ recorded: [RecordedEvent], _ transform: (RecordedEvent) throws -> T) -> [T] {
        var result: [T] = []
        result.reserveCapacity(recorded.count)
        // By index, each row lent to `transform` (a closure over each row copied it, ~2 % of a state's time).
        for index in recorded.indices {
            do {
                result.append(try transform(recorded[index]))
            } catch {
                logger.error("a stored event does not decode; left out of the answer", metadata: [
                    "ledger.position": "\(recorded[index].position)", "ledger.error": "\(error)",
                ])
            }
        }
        return result
    }

    /// What `ActivityFold.state` needs as of `asOf`: the events of `relevantEvents` with `at` ≤ asOf, decoded
    /// straight to `PositionedEvent` (later rows are neither decompressed nor decoded, nothing else is kept).
    func foldInput(_ db: any LedgerSnapshot, key: String, asOf: Instant) throws -> [PositionedEvent] {
        var recorded = try db.events(stream: Self.stream(.activity, key: key), atMost: asOf.milliseconds)
        for channel in try db.channels(following: key) {
            recorded += try db.events(stream: Self.stream(.channel, key: channel), atMost: asOf.milliseconds)
        }
        var decoder = StoredEventDecoder()
        return readable(recorded) { PositionedEvent(position: $0.position, event: try decoder.decode($0)) }
    }

    /// The stored stream name of a projection key (`app` U+001F `id` → `app` U+001F `kind:id`).
    static func stream(_ kind: StreamKind, key: String) -> String {
        let (app, id) = Namespaced.split(key)
        return Namespaced.qualify("\(kind.rawValue):\(id)", app: app)
    }

    /// The projection key of `id` in `app`'s namespace (nil: the app-less one).
    static func key(_ id: String, app: String?) -> String {
        Namespaced.qualify(id, app: app ?? "")
    }

    /// The threads ledger reads block on, process-wide (like `NIOThreadPool.singleton`, never shut down). Two fewer
    /// than the pool's reader connections (`StoreConfiguration.maximumReaders`): one for the query that runs on its
    /// caller's thread (``Ledger/callerThreadQuery``), one so that a synchronous read elsewhere (an API key, the head
    /// position) always finds a free reader however many slow queries are queued.
    static let readThreads: NIOThreadPool = {
        let threads = NIOThreadPool(numberOfThreads: StoreConfiguration.maximumReaders - 2)
        threads.start()
        return threads
    }()

    static func logged(_ recorded: RecordedEvent) throws -> LoggedEvent {
        var decoder = StoredEventDecoder()
        return try logged(recorded, decoder: &decoder)
    }

    static func logged(_ recorded: RecordedEvent, decoder: inout StoredEventDecoder) throws -> LoggedEvent {
        LoggedEvent(
            position: recorded.position, version: recorded.version,
            recordedAt: Instant(milliseconds: recorded.recordedAt), hash: recorded.hash,
            event: try decoder.decode(recorded)
        )
    }

    /// The event with this id in `app`'s namespace (nil: the app-less one), or a notFound error naming it.
    public func event(id: String, app: String? = nil) async throws -> LoggedEvent {
        try await read { db in try self.event(db, id: id, app: app) }
    }

    func event(_ db: any LedgerSnapshot, id: String, app: String?) throws -> LoggedEvent {
        guard let recorded = try db.event(id: Self.key(id, app: app)) else {
            throw LedgerError(.notFound, "no event with id \(id)", field: "event")
        }
        return try Self.logged(recorded)
    }

    /// Runs `query` on one consistent snapshot of the ledger: for a file, one read transaction on one of the
    /// pool's reader connections, on ``readThreads`` — never on one of Swift's cooperative threads, which every
    /// HTTP handler needs too; on PostgreSQL, one REPEATABLE READ transaction (`PostgresLedger.read`). Storage
    /// failures become storage errors naming the ledger, keeping the cause.
    ///
    /// Not GRDB's async `read`: it hands the reader back only once the awaiting task runs again on a cooperative
    /// thread, so when every cooperative thread was itself waiting for a reader (an API key checked with a
    /// synchronous read while 64 queries were in flight) nothing ran and the server stopped answering
    /// (`ConcurrentReadTests`). Here the thread that took the reader gives it back.
    ///
    /// With ``LedgerConfiguration/queriesOnCallerThread`` one query of this ledger at a time runs on the asking
    /// task's own thread instead (no hand-off): it holds a reader only while it runs, and awaits nothing meanwhile,
    /// so it cannot wait on a cooperative thread either.
    func read<T: Sendable>(_ query: @escaping @Sendable (any LedgerSnapshot) throws -> T) async throws -> T {
        switch storage {
        case .file(let store):
            let pool = store.pool
            let run: @Sendable () throws -> T = {
                try pool.read { db in try query(SQLiteSnapshot(store: store, db: db)) }
            }
            do {
                if queriesOnCallerThread, callerThreadQuery.compareExchange(
                    expected: false, desired: true, ordering: .acquiring).exchanged
                {
                    defer { callerThreadQuery.store(false, ordering: .releasing) }
                    return try run()
                }
                return try await Self.readThreads.runIfActive(run)
            } catch {
                // A LedgerError the query threw passes through unchanged.
                throw Self.storageError(error, path: path, busyTimeout: store.configuration.busyTimeout)
            }
        case .postgres(let postgres):
            do {
                return try await postgres.read(query)
            } catch {
                throw Self.storageError(error, path: path)
            }
        }
    }

    /// The current time, to the millisecond (truncated), as the ledger records it.
    public static func now() -> Instant {
        Instant(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
    }
}
