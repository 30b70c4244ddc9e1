import Foundation
import LedgerStore
import Logging
import NIOCore
import PostgresNIO
import Synchronization

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
    package let client: PostgresClient
    let logger: Logger
    private let running: Task<Void, Never>

    /// Connects (the pool opens connections as they are needed, at most `maximumConnections`) and migrates, or
    /// with `readOnly` only checks that the database is a ledger this version reads (the reading commands never
    /// write, on PostgreSQL as on a file).
    public init(
        url: String, maximumConnections: Int = 8, readOnly: Bool = false, optimisticAttempts: Int = 3, logger: Logger
    ) async throws {
        self.optimisticAttempts = max(0, optimisticAttempts)
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

    /// How many times an append tries without taking the head's lock first (``append(_:)``); 0 locks at once.
    let optimisticAttempts: Int

    /// The log as this process's last write left it: the head, and the last version of each stream it looked up or
    /// wrote since. Valid exactly while the head is unchanged, which the conditional write checks.
    struct Tail {
        var head: Digest
        var namespacedFrom: Int64
        var versions: [String: Int64]

        /// Streams remembered at most; past it the tail starts over from the next look.
        static let capacity = 16_384
    }

    private let tail = Mutex<Tail?>(nil)
    /// Looks made so far (`LookUp` statements), for the tests of when an append can do without one.
    package let looks = Atomic<Int>(0)

    /// Two statements, two round trips, when no other process appends at the same moment: one reads the head, the
    /// batch's streams' last versions and its ids already stored, in one snapshot (`LookUp`); the other writes the
    /// rows, moves the head and notifies, only if the head is still the one read, locking it for the check
    /// (`Write`); one, when this process made the last append and knows the batch's streams (it plans on the tail
    /// its own write left). If another append moved the head in between, nothing is written and the batch is
    /// planned again from a new look. After `optimisticAttempts` attempts (3 unless told) the append takes the head's
    /// lock before it looks, so it always gets through. Either way the rules (expected versions, re-sent ids, the
    /// chain) are the ones of `plan`, on a snapshot no append can have changed by the time the write succeeds.
    public func append(_ batch: AppendBatch) async throws -> AppendResult {
        try await append(batch) { _, _, _ in NoWriteParts() }
    }

    /// Appends `batch` together with what `alongside` makes of the rows it writes (the ledger's projection rows),
    /// in the one statement that writes the rows: both commit, or neither. `alongside` gets a connection to read
    /// what it needs, the rows and what the appender attached to each (`NewEvent.projectorInput`), and returns
    /// the write (`Parts`, whose statements are conditioned on the head as the rows are).
    ///
    /// Optimistic as ``append(_:)``: plan on the tail this process left (or on a look), let `alongside` read, and
    /// write only if the head is still the one planned on. Since every append moves the head, an unchanged head
    /// means no append committed since the look, so whatever `alongside` read after it is what the log says at that
    /// head. After `optimisticAttempts` races, the append takes the head's lock first (as an import).
    package func append<Parts: PostgresWriteParts>(
        _ batch: AppendBatch,
        alongside: @escaping @Sendable (PostgresConnection, [RecordedEvent], [ProjectorInput]) async throws -> Parts
    ) async throws -> AppendResult {
        try BatchWriter.validate(batch)
        guard !batch.events.isEmpty else { return AppendResult(positions: [], duplicate: [], versions: []) }
        let look = LookUp(batch)
        return try await storage {
            let optimistic = try await client.withConnection { connection -> AppendResult? in
                for attempt in 0..<self.optimisticAttempts {
                    // The first attempt plans on the tail when it knows every stream of the batch (no look). A plan
                    // the tail cannot judge (a conflict, a re-sent event) is judged on a look, and so is a write
                    // the unique id index refused (an id of the batch stored long ago: nothing of it written).
                    var fromTail = false
                    var planned: (snapshot: Snapshot, result: AppendResult, rows: [RecordedEvent])?
                    if attempt == 0, let snapshot = self.tailSnapshot(for: batch),
                        let (result, rows) = try? self.plan(batch, snapshot), !rows.isEmpty,
                        !result.duplicate.contains(true)
                    {
                        planned = (snapshot, result, rows)
                        fromTail = true
                    }
                    if planned == nil {
                        let snapshot = try await self.lookUp(look, on: connection)
                        let (result, rows) = try self.plan(batch, snapshot)
                        guard !rows.isEmpty else { return result }
                        planned = (snapshot, result, rows)
                    }
                    let (snapshot, result, rows) = planned!
                    let parts = try await alongside(connection, rows, Self.inputs(of: rows, in: batch))
                    do {
                        if try await self.write(rows, parts, after: snapshot.head, on: connection) {
                            parts.committed()  // one statement outside a transaction: written is committed
                            return result
                        }
                    } catch let error as PSQLError where fromTail && error.serverInfo?[.sqlState] == "23505" {
                        continue  // an id of the batch was stored long ago (nothing written): judged on a look
                    }
                }
                return nil
            }
            if let optimistic { return optimistic }
            return try await self.importTransaction { session in try await session.append(batch, alongside: alongside) }
        }
    }

    /// What the appender attached to each of `rows`, from the batch they were planned from.
    private static func inputs(of rows: [RecordedEvent], in batch: AppendBatch) -> [ProjectorInput] {
        var inputs: [String: ProjectorInput] = [:]
        for event in batch.events where inputs[event.id] == nil { inputs[event.id] = event.projectorInput }
        return rows.map { inputs[$0.id] ?? .empty }
    }

    /// Runs `body` in one transaction holding the head's lock, with a session that appends batches inside it
    /// (an import: a refused batch throws, and nothing of the transaction is written).
    package func importTransaction<T: Sendable>(_ body: @escaping @Sendable (ImportSession) async throws -> T) async throws -> T {
        try await withHeadLocked { connection in try await body(ImportSession(log: self, connection: connection)) }
    }

    /// Appends inside the transaction of ``importTransaction(_:)``.
    package struct ImportSession: Sendable {
        let log: PostgresEventLog
        package let connection: PostgresConnection

        /// Appends `batch` after everything the transaction wrote so far, with what `alongside` makes of its rows
        /// written in the same statement, as ``append(_:alongside:)`` does.
        package func append<Parts: PostgresWriteParts>(
            _ batch: AppendBatch,
            alongside: @Sendable (PostgresConnection, [RecordedEvent], [ProjectorInput]) async throws -> Parts
        ) async throws -> AppendResult {
            try BatchWriter.validate(batch)
            guard !batch.events.isEmpty else { return AppendResult(positions: [], duplicate: [], versions: []) }
            let snapshot = try await log.lookUp(LookUp(batch), on: connection)
            let (result, rows) = try log.plan(batch, snapshot)
            guard !rows.isEmpty else { return result }
            let parts = try await alongside(connection, rows, PostgresEventLog.inputs(of: rows, in: batch))
            guard try await log.write(rows, parts, after: snapshot.head, on: connection) else {
                throw StoreError(.storage, "\(log.location): log_head moved while this import held its lock")
            }
            return result
        }

        /// Whether an event with this id is stored (as the transaction sees it).
        package func contains(id: String) async throws -> Bool {
            try await connection.query("SELECT 1 FROM events WHERE id = \(id)", logger: log.logger).collect().isEmpty == false
        }
    }

    /// Runs `body` in a transaction holding the head's lock: no append of any process runs meanwhile.
    package func withHeadLocked<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await storage {
            try await client.withTransaction(logger: logger) { connection in
                _ = try await connection.query("SELECT position FROM log_head FOR UPDATE", logger: self.logger).collect()
                return try await body(connection)
            }
        }
    }

    /// What one look at the log found: the head, each stream's last version, the events stored under the ids.
    struct Snapshot {
        var head: Digest
        var namespacedFrom: Int64
        var versions: [String: Int64]
        var stored: [String: RecordedEvent]
    }

    /// The batch's outcome and the rows to write after `snapshot` (none when every event is already stored), or
    /// the conflict it meets: the same rules as the SQLite file's (`BatchWriter`).
    private func plan(_ batch: AppendBatch, _ snapshot: Snapshot) throws -> (AppendResult, [RecordedEvent]) {
        var versions = snapshot.versions
        let stored = snapshot.stored
        for (stream, expected) in batch.expected.sorted(by: { $0.key < $1.key }) {
            guard let wanted = expected.version else { continue }
            let actual = versions[stream] ?? 0
            guard actual != wanted else { continue }
            // A retried batch: every event already stored identically.
            if batch.events.allSatisfy({ event in stored[event.id].map { BatchWriter.sameContent($0, event) } ?? false }) {
                let originals = batch.events.map { stored[$0.id]! }
                let result = AppendResult(
                    positions: originals.map(\.position), duplicate: originals.map { _ in true },
                    versions: originals.map(\.version))
                return (result, [])
            }
            throw StoreError.versionConflict(stream: stream, expected: expected, actual: actual)
        }
        var result = AppendResult(positions: [], duplicate: [], versions: [])
        var written: [String: RecordedEvent] = [:]
        var rows: [RecordedEvent] = []
        var hasher = ChainHasher()
        var position = snapshot.head.position
        var lastHash = snapshot.head.hash
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
            row.hash = hasher.hash(row, namespacedFrom: snapshot.namespacedFrom, previous: lastHash)
            lastHash = row.hash
            written[event.id] = row
            rows.append(row)
            result.positions.append(position)
            result.duplicate.append(false)
            result.versions.append(version)
        }
        return (result, rows)
    }

    /// Writes `rows` (and `parts`) if the head is still `head`: true when written, false (nothing written) when
    /// another append moved it.
    private func write<Parts: PostgresWriteParts>(
        _ rows: [RecordedEvent], _ parts: Parts, after head: Digest, on connection: PostgresConnection
    ) async throws -> Bool {
        // Its rows are read, so that an error of a data-modifying part (raised after the SELECT's row is sent) is
        // thrown here: unread, the statement would fail in silence.
        var written = false
        for try await (value, _) in try await connection.execute(
            Write(rows: rows, head: head, parts: parts), logger: logger)
        {
            written = value
        }
        if written { remember(rows) }
        return written
    }

    /// The tail this process's last append left, as a snapshot to plan `batch` on, when it knows every stream of
    /// the batch, those it expects a version of included (nil: look).
    ///
    /// The snapshot holds the versions of the batch's streams only: sharing the tail's whole dictionary would make
    /// the next change to the tail copy it.
    private func tailSnapshot(for batch: AppendBatch) -> Snapshot? {
        tail.withLock { tail -> Snapshot? in
            guard let known = tail else { return nil }
            var versions: [String: Int64] = [:]
            for stream in LookUp.streams(of: batch) {
                guard let version = known.versions[stream] else { return nil }
                versions[stream] = version
            }
            return Snapshot(head: known.head, namespacedFrom: known.namespacedFrom, versions: versions, stored: [:])
        }
    }

    /// After a successful write: the tail it left. The tail it was planned on (a look's or the previous write's)
    /// ends just before it, unless another append of this process went further meanwhile (then that one's tail is
    /// kept) or the tail is older than that (then it is forgotten: other streams may have moved since).
    private func remember(_ rows: [RecordedEvent]) {
        guard let first = rows.first, let last = rows.last else { return }
        tail.withLock { tail in
            guard let head = tail?.head.position else { return }
            if head == first.position - 1 {
                // In place, as in `lookUp`.
                for row in rows { tail!.versions[row.stream] = row.version }
                tail!.head = Digest(position: last.position, hash: last.hash)
                if tail!.versions.count > Tail.capacity { tail = nil }
            } else if head < last.position {
                tail = nil
            }
        }
    }

    /// `Write`'s name and SQL for each `Parts` type, built once.
    private static let writeStatements = Mutex<[ObjectIdentifier: (name: String, sql: String)]>([:])

    /// One statement for the whole batch, prepared once per connection: the head locked if it is still the one
    /// the batch was planned on; the rows, each column bound as an array and unnested; the head moved to the last
    /// of them; the notification (sent by PostgreSQL at commit); and what `Parts` writes beside them. Each part
    /// runs only when the head matched. In READ COMMITTED a lock that had to wait re-reads the row it waited for,
    /// so a head another append moved meanwhile no longer matches.
    struct Write<Parts: PostgresWriteParts>: PostgresPreparedStatement {
        /// PostgresNIO asks for the name and the SQL at every execution: both are built once per `Parts`.
        static var name: String { text.name }
        static var sql: String { text.sql }

        private static var text: (name: String, sql: String) {
            let key = ObjectIdentifier(Parts.self)
            if let known = PostgresEventLog.writeStatements.withLock({ $0[key] }) { return known }
            let built = (name: String(reflecting: Self.self), sql: build())
            PostgresEventLog.writeStatements.withLock { $0[key] = built }
            return built
        }

        private static func build() -> String {
            """
            WITH head AS (
                SELECT position FROM log_head WHERE position = $10 AND hash = $11 FOR UPDATE
            ), inserted AS (
                INSERT INTO events (position, stream, version, id, type, at, recorded_at, payload, hash)
                SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::bigint[],
                    $7::bigint[], $8::bytea[], $9::bytea[])
                WHERE EXISTS (SELECT 1 FROM head)
            ), moved AS (
                UPDATE log_head SET position = $12, hash = $13 WHERE EXISTS (SELECT 1 FROM head)
            ), notified AS (
                SELECT pg_notify('ledger_events', $12::text) FROM head
            )\(Parts.sql(placeholdersFrom: 14))
            SELECT EXISTS (SELECT 1 FROM head), (SELECT count(*) FROM notified)
            """
        }
        typealias Row = (Bool, Int64)

        var rows: [RecordedEvent]
        var head: Digest
        var parts: Parts

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 13)
            try bindings.append(rows.map(\.position))
            try bindings.append(rows.map(\.stream))
            try bindings.append(rows.map(\.version))
            try bindings.append(rows.map(\.id))
            try bindings.append(rows.map(\.type))
            try bindings.append(rows.map(\.at))
            try bindings.append(rows.map(\.recordedAt))
            bindings.append(PostgresByteaArray(rows.map(\.payload)))
            bindings.append(PostgresByteaArray(rows.map(\.hash)))
            try bindings.append(head.position)
            try bindings.append(ByteBuffer(bytes: head.hash))
            try bindings.append(rows[rows.count - 1].position)
            try bindings.append(ByteBuffer(bytes: rows[rows.count - 1].hash))
            try parts.bind(into: &bindings)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// In one statement (one snapshot, one round trip, prepared once per connection): the head; the last version of
    /// each stream (absent: none yet), each by its own descent of the (stream, version) index; and the events
    /// already stored under the ids. The head's row has no stream; the version rows have no position.
    struct LookUp: PostgresPreparedStatement {
        static let name = "ledger_look_up"
        static let sql = """
            SELECT position, NULL::text, namespaced_from, NULL::text, NULL::text, NULL::bigint, NULL::bigint,
                NULL::bytea, hash FROM log_head
            UNION ALL
            SELECT NULL::bigint, s.stream, (SELECT max(version) FROM events WHERE events.stream = s.stream),
                NULL::text, NULL::text, NULL::bigint, NULL::bigint, NULL::bytea, NULL::bytea
            FROM unnest($1::text[]) AS s(stream)
            UNION ALL
            SELECT position, stream, version, id, type, at, recorded_at, payload, hash FROM events
            WHERE id = ANY($2::text[])
            """
        typealias Row = (Int64?, String?, Int64?, String?, String?, Int64?, Int64?, ByteBuffer?, ByteBuffer?)

        var streams: [String]
        var ids: [String]

        /// The look `batch` is planned on: its events' streams and ids, and the streams it expects a version of
        /// (which it may write nothing to).
        init(_ batch: AppendBatch) {
            streams = Array(Self.streams(of: batch))
            ids = Array(Set(batch.events.map(\.id)))
        }

        /// The streams whose last version `batch` is judged on.
        static func streams(of batch: AppendBatch) -> Set<String> {
            Set(batch.events.map(\.stream)).union(batch.expected.keys)
        }

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            try bindings.append(streams)
            try bindings.append(ids)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    private func lookUp(_ look: LookUp, on connection: PostgresConnection) async throws -> Snapshot {
        looks.add(1, ordering: .relaxed)
        var snapshot = Snapshot(head: Digest(position: -1, hash: []), namespacedFrom: 0, versions: [:], stored: [:])
        for try await (position, stream, version, id, type, at, recordedAt, payload, hash)
            in try await connection.execute(look, logger: logger)
        {
            guard let stream else {
                // The head: its position, namespaced_from (in the version column) and hash.
                guard let position, let version, let hash else {
                    throw StoreError(.schema, "\(location): log_head has a NULL column")
                }
                snapshot.head = Digest(position: position, hash: Array(buffer: hash))
                snapshot.namespacedFrom = version
                continue
            }
            guard let position else {
                if let version { snapshot.versions[stream] = version }
                continue
            }
            guard let version, let id, let type, let at, let recordedAt, let payload, let hash else {
                throw StoreError(.schema, "\(location): event at position \(position) has a NULL column")
            }
            snapshot.stored[id] = RecordedEvent(
                position: position, stream: stream, version: version, id: id, type: type, at: at,
                recordedAt: recordedAt, payload: Array(buffer: payload), hash: Array(buffer: hash))
        }
        guard snapshot.head.position >= 0 else { throw StoreError(.schema, "\(location): log_head has no row") }
        // A stream the look found none of is at version 0; the tail remembers the look.
        var versions = snapshot.versions
        for stream in look.streams where versions[stream] == nil { versions[stream] = 0 }
        tail.withLock { tail in
            if tail?.head == snapshot.head {
                // In place: the tail's dictionary is not copied (it holds up to `Tail.capacity` streams).
                for (stream, version) in versions { tail!.versions[stream] = version }
            } else if tail.map({ $0.head.position < snapshot.head.position }) ?? true {
                tail = Tail(head: snapshot.head, namespacedFrom: snapshot.namespacedFrom, versions: versions)
            }
        }
        return snapshot
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
            let newest = try await client.query(PostgresQuery(unsafeSQL: PostgresChainScan.newestSQL), logger: logger)
                .collect().first?.decode(Int64.self) ?? 0
            var scan = PostgresChainScan(head: head, newest: newest, namespacedFrom: namespacedFrom, digest: digest)
            while let page = scan.nextPage {
                guard scan.check(try await events(after: page.after, limit: page.limit)) else { break }
            }
            return scan.report()
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
    package func storage<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as StoreError {
            throw error
        } catch let error as PostgresTransactionError {
            // The transaction's own error (ours, e.g. a version conflict, or the server's), else its BEGIN's or COMMIT's.
            let cause = error.closureError ?? error.commitError ?? error.beginError ?? error.rollbackError
            if let store = cause as? StoreError { throw store }
            // What the caller's own code threw inside the transaction (a refused import line) passes unchanged.
            if let own = error.closureError, !(own is PSQLError), !(own is CancellationError) { throw own }
            throw Self.storageError(cause ?? StoreError(.storage, "\(location): the transaction failed"), location: location)
        } catch {
            throw Self.storageError(error, location: location)
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
