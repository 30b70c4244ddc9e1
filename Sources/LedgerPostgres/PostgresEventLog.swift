import Foundation
import LedgerStore
import Logging
import NIOCore
import PostgresNIO

/// The event log in a PostgreSQL database (`Schemas/sql/postgresql/`): several processes on one database are one
/// log. Each append is one transaction that first locks the one `log_head` row, so appends of every process take
/// positions in turn (gapless), see every earlier append (ids and versions unique), and extend one chain; a
/// process killed mid-append leaves nothing, as PostgreSQL rolls its transaction back. Each commit notifies
/// `ledger_events` with its last position (``waitForAppend(after:timeout:)``).
///
/// Payloads are stored as sent (PostgreSQL's TOAST compresses the large ones): SPEC §6 lets PostgreSQL keep a
/// row per event; sealed segments are a matter of the SQLite file.
public final class PostgresEventLog: EventLog {
    public let location: String
    let client: PostgresClient
    let logger: Logger
    private let running: Task<Void, Never>

    /// Connects (the pool opens connections as they are needed, at most `maximumConnections`) and migrates, or
    /// with `readOnly` only checks that the database is a ledger this version reads (the reading commands never
    /// write, on PostgreSQL as on a file).
    public init(url: String, maximumConnections: Int = 8, readOnly: Bool = false, logger: Logger) async throws {
        let parsed = try PostgresURL(url)
        location = parsed.redacted
        self.logger = logger
        do {
            try await parsed.probe(logger: logger)
        } catch let error as PSQLError {
            throw StoreError(.storage, "\(parsed.redacted): cannot connect: \(Self.describe(error))")
        } catch {
            throw StoreError(.storage, "\(parsed.redacted): cannot connect: \(error)")
        }
        let client = PostgresClient(
            configuration: parsed.configuration(maximumConnections: maximumConnections), backgroundLogger: logger)
        self.client = client
        running = Task { await client.run() }
        do {
            try await storage {
                if readOnly {
                    try await PostgresSchema.check(client, location: parsed.redacted, logger: logger)
                } else {
                    try await PostgresSchema.migrate(client, location: parsed.redacted, logger: logger)
                }
            }
        } catch {
            await close()
            throw error
        }
    }

    /// Closes every connection; the log takes no more calls.
    public func close() async {
        running.cancel()
        await running.value
    }

    static let columns = "SELECT position, stream, version, id, type, at, recorded_at, payload, hash FROM events"

    // MARK: Appending

    public func append(_ batch: AppendBatch) async throws -> AppendResult {
        try BatchWriter.validate(batch)
        guard !batch.events.isEmpty else { return AppendResult(positions: [], duplicate: [], versions: []) }
        return try await storage {
            try await client.withTransaction(logger: logger) { connection in
                try await self.append(batch, on: connection)
            }
        }
    }

    private func append(_ batch: AppendBatch, on connection: PostgresConnection) async throws -> AppendResult {
        let head = try await connection.query(
            "SELECT position, hash, namespaced_from FROM log_head FOR UPDATE", logger: logger
        ).collect()
        guard let headRow = head.first else { throw StoreError(.schema, "\(location): log_head has no row") }
        var (position, previous, namespacedFrom) = try headRow.decode((Int64, ByteBuffer, Int64).self)
        var lastHash = Array(buffer: previous)
        // After the lock, in a statement of its own: a statement's snapshot is taken when it starts, so only a
        // statement after the lock sees every append committed before it.
        let lookedUp = try await lookUp(
            streams: Array(Set(batch.events.map(\.stream))), ids: Array(Set(batch.events.map(\.id))), on: connection)
        var versions = lookedUp.versions
        let stored = lookedUp.stored

        for (stream, expected) in batch.expected.sorted(by: { $0.key < $1.key }) {
            guard let wanted = expected.version else { continue }
            let actual = versions[stream] ?? 0
            guard actual != wanted else { continue }
            // A retried batch: every event already stored identically.
            if batch.events.allSatisfy({ event in stored[event.id].map { BatchWriter.sameContent($0, event) } ?? false }) {
                let originals = batch.events.map { stored[$0.id]! }
                return AppendResult(
                    positions: originals.map(\.position), duplicate: originals.map { _ in true },
                    versions: originals.map(\.version))
            }
            throw StoreError.versionConflict(stream: stream, expected: expected, actual: actual)
        }

        var result = AppendResult(positions: [], duplicate: [], versions: [])
        var written: [String: RecordedEvent] = [:]
        var rows: [RecordedEvent] = []
        var hasher = ChainHasher()
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        for event in batch.events {
            if let existing = stored[event.id] ?? written[event.id] {
                try BatchWriter.repeated(existing, event, result: &result)
                continue
            }
            position += 1
            let version = (versions[event.stream] ?? 0) + 1
            versions[event.stream] = version
            var row = RecordedEvent(
                position: position, stream: event.stream, version: version, id: event.id, type: event.type,
                at: event.at, recordedAt: event.recordedAt ?? now, payload: event.payload, hash: [])
            row.hash = hasher.hash(row, namespacedFrom: namespacedFrom, previous: lastHash)
            lastHash = row.hash
            written[event.id] = row
            rows.append(row)
            result.positions.append(position)
            result.duplicate.append(false)
            result.versions.append(version)
        }
        guard !rows.isEmpty else { return result }
        try await write(rows, on: connection)
        return result
    }

    /// One statement (one round trip) for the whole batch: the rows, each column bound as an array and unnested;
    /// the head moved to the last of them; the notification (sent by PostgreSQL at commit). A failure of any part
    /// fails the statement and so the transaction.
    private func write(_ rows: [RecordedEvent], on connection: PostgresConnection) async throws {
        let positions = rows.map(\.position)
        let streams = rows.map(\.stream)
        let versions = rows.map(\.version)
        let ids = rows.map(\.id)
        let types = rows.map(\.type)
        let ats = rows.map(\.at)
        let recordedAts = rows.map(\.recordedAt)
        let payloads = rows.map { ByteBuffer(bytes: $0.payload) }
        let hashes = rows.map { ByteBuffer(bytes: $0.hash) }
        let last = rows[rows.count - 1]
        let lastHash = ByteBuffer(bytes: last.hash)
        // Data-modifying WITH clauses run exactly once, to completion, whether or not the query reads them; they
        // finish after the SELECT's row is sent, so their error (a unique violation, …) comes after it: the rows
        // must be read for it to be thrown. Unread, the transaction would be aborted in silence and its COMMIT
        // answered ROLLBACK, an append acknowledged and lost.
        _ = try await connection.query(
            """
            WITH inserted AS (
                INSERT INTO events (position, stream, version, id, type, at, recorded_at, payload, hash)
                SELECT * FROM unnest(\(positions)::bigint[], \(streams)::text[], \(versions)::bigint[], \(ids)::text[],
                    \(types)::text[], \(ats)::bigint[], \(recordedAts)::bigint[], \(payloads)::bytea[], \(hashes)::bytea[])
            ), head AS (
                UPDATE log_head SET position = \(last.position), hash = \(lastHash)
            )
            SELECT pg_notify('ledger_events', \(String(last.position)))
            """, logger: logger
        ).collect()
    }

    /// In one statement (one round trip): the last version of each of `streams` (absent: none yet), each by its
    /// own descent of the (stream, version) index, and the events already stored under `ids`. The version rows
    /// are the ones without a position.
    private func lookUp(streams: [String], ids: [String], on connection: PostgresConnection) async throws
        -> (versions: [String: Int64], stored: [String: RecordedEvent])
    {
        let rows = try await connection.query(
            """
            SELECT NULL::bigint, s.stream, (SELECT max(version) FROM events WHERE events.stream = s.stream),
                NULL::text, NULL::text, NULL::bigint, NULL::bigint, NULL::bytea, NULL::bytea
            FROM unnest(\(streams)::text[]) AS s(stream)
            UNION ALL
            SELECT position, stream, version, id, type, at, recorded_at, payload, hash FROM events
            WHERE id = ANY(\(ids)::text[])
            """, logger: logger)
        var versions: [String: Int64] = [:]
        var stored: [String: RecordedEvent] = [:]
        for try await (position, stream, version, id, type, at, recordedAt, payload, hash) in rows.decode(
            (Int64?, String, Int64?, String?, String?, Int64?, Int64?, ByteBuffer?, ByteBuffer?).self)
        {
            guard let position else {
                if let version { versions[stream] = version }
                continue
            }
            guard let version, let id, let type, let at, let recordedAt, let payload, let hash else {
                throw StoreError(.schema, "\(location): event at position \(position) has a NULL column")
            }
            stored[id] = RecordedEvent(
                position: position, stream: stream, version: version, id: id, type: type, at: at,
                recordedAt: recordedAt, payload: Array(buffer: payload), hash: Array(buffer: hash))
        }
        return (versions, stored)
    }

    // MARK: Reading

    public func lastPosition() async throws -> Int64 {
        try await storage { try await head().position }
    }

    public func event(id: String) async throws -> RecordedEvent? {
        try await storage {
            try await Self.decode(client.query(
                PostgresQuery(unsafeSQL: Self.columns + " WHERE id = $1", binds: try binds(id)), logger: logger)
            ).first
        }
    }

    public func events(stream: String, fromVersion: Int64) async throws -> [RecordedEvent] {
        try await storage {
            try await Self.decode(client.query(
                "\(unescaped: Self.columns) WHERE stream = \(stream) AND version >= \(fromVersion) ORDER BY version",
                logger: logger))
        }
    }

    public func events(after position: Int64, limit: Int) async throws -> [RecordedEvent] {
        guard limit > 0 else { return [] }
        return try await storage {
            try await Self.decode(client.query(
                "\(unescaped: Self.columns) WHERE position > \(position) ORDER BY position LIMIT \(Int64(limit))",
                logger: logger))
        }
    }

    public func digest() async throws -> Digest {
        try await storage { try await head() }
    }

    /// Pages through the rows in position order (each page its own statement: rows are never changed in place, so
    /// pages by position are one consistent log).
    public func verify(upTo digest: Digest?) async throws -> VerifyReport {
        try await storage {
            let namespacedFrom = try await self.namespacedFrom()
            let head = try await self.head()
            let newest = try await client.query("SELECT coalesce(max(position), 0) FROM events", logger: logger)
                .collect().first?.decode(Int64.self) ?? 0
            let last = max(head.position, newest)
            let limit = min(digest?.position ?? last, last)
            var checker = ChainChecker()
            var after: Int64 = 0
            scan: while after < limit {
                let page = try await events(after: after, limit: Int(min(10_000, limit - after)))
                guard !page.isEmpty else { break }
                for event in page {
                    guard checker.check(event, prefix: ChainHasher.prefix(event, namespacedFrom: namespacedFrom))
                    else { break scan }
                }
                after = page[page.count - 1].position
            }
            var report = checker.finish(limit: limit, last: last, digest: digest)
            // The head must name the chain's end: a head that disagrees with the rows was changed by hand.
            if report.ok, digest == nil, report.lastGood != head {
                report.ok = false
                report.firstBadPosition = head.position
                report.reason = "log_head names position \(head.position) with a hash the chain does not reach"
            }
            return report
        }
    }

    public func namespacedFrom() async throws -> Int64 {
        try await storage {
            try await client.query("SELECT namespaced_from FROM log_head", logger: logger)
                .collect().first?.decode(Int64.self) ?? 0
        }
    }

    public func adoptNamespacedFrom(_ position: Int64) async throws {
        guard position > 1 else { return }
        try await storage {
            try await client.withTransaction(logger: logger) { connection in
                let head = try await connection.query("SELECT position FROM log_head FOR UPDATE", logger: logger)
                    .collect().first?.decode(Int64.self) ?? 0
                guard head == 0 else {
                    throw StoreError(
                        .invalidEvent, "\(self.location) holds events: only an empty log takes a copy's namespaced_from")
                }
                try await connection.query("UPDATE log_head SET namespaced_from = \(position)", logger: logger)
            }
        }
    }

    /// Waits until an append of any process on the database has gone past `position`, or `timeout` passed;
    /// returns the last position then. LISTENs on `ledger_events` on a connection of its own before looking, so
    /// no append between the look and the wait is missed.
    public func waitForAppend(after position: Int64, timeout: Duration) async throws -> Int64 {
        try await storage {
            try await client.withConnection { connection in
                try await connection.listen(on: "ledger_events") { notifications in
                    let current = try await self.head(on: connection).position
                    guard current <= position else { return current }
                    return try await withThrowingTaskGroup(of: Int64?.self) { group in
                        group.addTask {
                            for try await notification in notifications {
                                if let last = Int64(notification.payload), last > position { return last }
                            }
                            return nil
                        }
                        group.addTask {
                            try await Task.sleep(for: timeout)
                            return nil
                        }
                        let first = try await group.next() ?? nil
                        group.cancelAll()
                        return first ?? position
                    }
                }
            }
        }
    }

    // MARK: Support

    private func head() async throws -> Digest {
        try await client.withConnection { connection in try await self.head(on: connection) }
    }

    private func head(on connection: PostgresConnection) async throws -> Digest {
        guard let row = try await connection.query("SELECT position, hash FROM log_head", logger: logger)
            .collect().first
        else { throw StoreError(.schema, "\(location): log_head has no row") }
        let (position, hash) = try row.decode((Int64, ByteBuffer).self)
        return Digest(position: position, hash: Array(buffer: hash))
    }

    static func decode(_ rows: PostgresRowSequence) async throws -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        for try await (position, stream, version, id, type, at, recordedAt, payload, hash) in rows.decode(
            (Int64, String, Int64, String, String, Int64, Int64, ByteBuffer, ByteBuffer).self)
        {
            events.append(RecordedEvent(
                position: position, stream: stream, version: version, id: id, type: type, at: at,
                recordedAt: recordedAt, payload: Array(buffer: payload), hash: Array(buffer: hash)))
        }
        return events
    }

    private func binds(_ value: some PostgresEncodable) throws -> PostgresBindings {
        var bindings = PostgresBindings()
        try bindings.append(value)
        return bindings
    }

    /// Runs `body`; a PostgreSQL failure becomes one storage error naming the database (never its password).
    func storage<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as StoreError {
            throw error
        } catch let error as PostgresTransactionError {
            // The transaction's own error (ours, e.g. a version conflict, or the server's), else its BEGIN's or COMMIT's.
            let cause = error.closureError ?? error.commitError ?? error.beginError ?? error.rollbackError
            if let store = cause as? StoreError { throw store }
            if let server = cause as? PSQLError { throw StoreError(.storage, "\(location): \(Self.describe(server))") }
            throw StoreError(.storage, "\(location): \(cause.map { "\($0)" } ?? "the transaction failed")")
        } catch let error as PSQLError {
            throw StoreError(.storage, "\(location): \(Self.describe(error))")
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw StoreError(.storage, "\(location): \(error)")
        }
    }

    /// The server's message when there is one (with its SQLSTATE), else what failed on the way.
    static func describe(_ error: PSQLError) -> String {
        if let info = error.serverInfo, let message = info[.message] {
            return message + (info[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
        }
        if let underlying = error.underlying { return "\(error.code): \(underlying)" }
        return "\(error.code)"
    }
}
