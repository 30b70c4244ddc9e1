import ActivityModel
import Foundation
import LedgerPostgres
import LedgerStore
import Logging
import PostgresNIO
import Synchronization

/// The projection's rows in a ledger's PostgreSQL database (`Schemas/sql/postgresql/002_ledger.sql`), with
/// exactly `SQLiteProjectionRows`'s semantics, in a constant number of round trips per batch rather than some per
/// event: `prepare` reads every row the batch can touch in two statements; every call then works on those rows in
/// memory; the changed ones go back in one statement at `savePosition` (the end of every batch), or sooner when
/// many have piled up. A row not read by `prepare` is read when first asked, so correctness never depends on
/// `prepare` having foreseen it.
///
/// An append's rows are `deferred`: read (outside any transaction), changed in memory and handed to the append's
/// write statement, which writes them with the events only if no other append committed since the batch was
/// planned (`PostgresEventLog.append(_:alongside:)`); what they were read from is then still what the log says.
/// A catch-up or rebuild writes them itself, holding the head's lock. Every call blocks its thread until the
/// server answered: call it from a thread of its own, never an event loop. PostgreSQL's errors are thrown as they
/// come (`PostgresEventLog.storageError` names them).
struct PostgresProjectionRows: ProjectionRows {
    let connection: PostgresConnection
    let logger: Logger

    /// Deferred (an append's rows), nothing is written: the batch's rows wait in ``pendingWrite`` for the append's
    /// own statement, which writes them only if the head is still the one they were read at. Otherwise (a catch-up
    /// or rebuild holding the head's lock) rows are written as they pile up and at `savePosition`.
    let deferred: Bool
    /// Deferred, what `savePosition` left to write.
    private(set) var pendingWrite = PostgresProjectionWrite()
    /// Rows as this process's appends left them, and the head position the batch was planned at: rows the cache
    /// holds at that position are taken from it, not read (deferred only; see `PostgresProjectionCache`).
    private let cache: PostgresProjectionCache?
    private let plannedAt: Int64

    init(
        connection: PostgresConnection, logger: Logger, deferred: Bool = false, cache: PostgresProjectionCache? = nil,
        plannedAt: Int64 = -1
    ) {
        self.connection = connection
        self.logger = logger
        self.deferred = deferred
        self.cache = deferred ? cache : nil
        self.plannedAt = plannedAt
    }

    /// Rows changed and not written yet, past which `write` writes at once (a rebuild's long batches).
    static let writeThreshold = 8_192
    /// Rows held (changed or not) past which a write forgets the ones it has written, to be read again if asked.
    static let heldCapacity = 65_536

    struct TokenRow: Equatable, Sendable {
        var activity: String
        var firstAt: Int64
        var deadAt: Int64?
    }

    struct Pair: Hashable, Sendable {
        var first: String
        var second: String
    }

    /// A channel's `channel_members` rows as far as read: `since` of each member known (read or added), the
    /// activities known not to be members, and whether every member is known (`members(of:at:)` needs them all).
    struct Channel: Sendable {
        var since: [String: Int64] = [:]
        var absent: Set<String> = []
        var complete = false
    }

    /// Known rows (a nil value: known to have no row), in the cache's own shape, so publishing them is a copy.
    private var held = PostgresProjectionCache.Rows()

    /// Rows changed since last written.
    private var dirtySummaries: Set<String> = []
    private var dirtyTokens: Set<String> = []
    private var dirtyStartTokens: Set<Pair> = []
    /// (channel, activity)
    private var dirtyMembers: Set<Pair> = []

    private var dirtyCount: Int {
        dirtySummaries.count + dirtyTokens.count + dirtyStartTokens.count + dirtyMembers.count
    }

    // MARK: ProjectionRows

    /// Reads, in two statements, every row the batch's events can touch (what `ProjectionBatch` does with each):
    /// the tokens of token events and 410 pushes; the start tokens of installations' events; the members of each
    /// channel a channel update or end reaches (all of them); the (channel, activity) rows of subscribes and of
    /// requests with a channel push type; then the summaries of every activity an event names and of those
    /// members.
    mutating func prepare(_ events: [ProjectionEvent]) throws {
        var activityKeys: Set<String> = []
        var tokenKeys: Set<String> = []
        var startTokenKeys: Set<Pair> = []
        var fullChannels: Set<String> = []
        var memberKeys: Set<Pair> = []
        for event in events {
            let id = event.stream.id
            switch event.stream.kind {
            case .activity:
                activityKeys.insert(id)
                switch event.body {
                case .request(let request):
                    if case .channel(let channel)? = request.pushType {
                        memberKeys.insert(Pair(first: channel, second: id))
                    }
                case .token(let token):
                    tokenKeys.insert(token)
                case .push(let push):
                    if push.status == 410, let token = push.token { tokenKeys.insert(token) }
                case .subscribe(let activity):
                    activityKeys.insert(activity)
                default:
                    break
                }
            case .channel:
                switch event.body {
                case .subscribe(let activity):
                    memberKeys.insert(Pair(first: id, second: activity))
                    activityKeys.insert(activity)
                case .update, .end:
                    fullChannels.insert(id)
                default:
                    break
                }
            case .installation:
                if case .startToken(let token) = event.body { startTokenKeys.insert(Pair(first: id, second: token)) }
            }
        }
        try load(
            tokens: tokenKeys.filter { held.tokens[$0] == nil },
            startTokens: startTokenKeys.filter { held.startTokens[$0] == nil },
            channels: fullChannels.filter { held.channels[$0]?.complete != true },
            members: memberKeys.filter { !isKnown(member: $0) })
        for channel in fullChannels {
            if let members = held.channels[channel]?.since { activityKeys.formUnion(members.keys) }
        }
        try loadSummaries(activityKeys.filter { held.summaries[$0] == nil })
    }

    mutating func addStartToken(installation: String, token: String, at: Int64) throws {
        let key = Pair(first: installation, second: token)
        if held.startTokens[key] == nil { try load(startTokens: [key]) }
        let stored = held.startTokens[key] ?? nil
        held.startTokens[key] = min(stored ?? at, at)
        dirtyStartTokens.insert(key)
    }

    mutating func addToken(_ token: String, activity: String, at: Int64) throws {
        if held.tokens[token] == nil { try load(tokens: [token]) }
        if var row = held.tokens[token] ?? nil {
            // As SQLite's upsert: the first activity stays, the earliest time wins.
            row.firstAt = min(row.firstAt, at)
            held.tokens[token] = row
        } else {
            held.tokens[token] = TokenRow(activity: activity, firstAt: at, deadAt: nil)
        }
        dirtyTokens.insert(token)
    }

    mutating func killToken(_ token: String, from: Int64) throws {
        if held.tokens[token] == nil { try load(tokens: [token]) }
        guard var row = held.tokens[token] ?? nil else { return }  // not stored: left alone
        row.deadAt = min(row.deadAt ?? from, from)
        held.tokens[token] = row
        dirtyTokens.insert(token)
    }

    mutating func addMember(channel: String, activity: String, since: Int64) throws {
        let key = Pair(first: channel, second: activity)
        if !isKnown(member: key) { try load(members: [key]) }
        let stored = held.channels[channel]?.since[activity]
        held.channels[channel, default: Channel()].since[activity] = min(stored ?? since, since)
        held.channels[channel]?.absent.remove(activity)
        dirtyMembers.insert(key)
    }

    mutating func members(of channel: String, at: Int64) throws -> [String] {
        if held.channels[channel]?.complete != true { try load(channels: [channel]) }
        return held.channels[channel, default: Channel()].since.compactMap { $0.value <= at ? $0.key : nil }
    }

    mutating func summary(_ activity: String) throws -> ActivitySummary? {
        if held.summaries[activity] == nil { try loadSummaries([activity]) }
        return held.summaries[activity] ?? nil
    }

    /// Held as SQLite would read them back: the intended state's hash in `intendedHash`, no state.
    mutating func write(_ rows: some Sequence<ActivitySummary>) throws {
        for var row in rows {
            if let state = row.intendedState {
                row.intendedHash = state.hash
                row.intendedState = nil
            }
            held.summaries[row.activity] = row
            dirtySummaries.insert(row.activity)
        }
        if !deferred, dirtyCount >= Self.writeThreshold { try writeChanges(position: nil) }
    }

    /// Counts nothing in place: the rows a batch touches are held here already (`prepare`), so the batch counts
    /// them in memory.
    func count(_ counted: [String: ActivitySummary.Counted]) throws -> [String] { Array(counted.keys) }

    /// Writes every changed row and the position, in one statement; deferred, keeps them for ``pendingWrite``.
    mutating func savePosition(_ position: Int64) throws {
        if deferred {
            let rows = held
            pendingWrite = takeChanges(position: position)
            if let cache { pendingWrite.publish = (cache, rows, plannedAt, position) }
        } else {
            try writeChanges(position: position)
        }
    }

    // MARK: Reading

    private func isKnown(member key: Pair) -> Bool {
        guard let channel = held.channels[key.first] else { return false }
        return channel.complete || channel.since[key.second] != nil || channel.absent.contains(key.second)
    }

    /// Reads the rows of `tokens`, `startTokens`, every member of `channels`, and the `members` (channel, activity)
    /// rows, in one statement; keys not found are remembered as absent. A row already held is kept as held (it may
    /// have changed since read).
    private mutating func load(
        tokens tokenKeys: Set<String> = [], startTokens startKeys: Set<Pair> = [], channels channelKeys: Set<String> = [],
        members memberKeys: Set<Pair> = []
    ) throws {
        var tokenKeys = tokenKeys
        var startKeys = startKeys
        var channelKeys = channelKeys
        var memberKeys = memberKeys
        if let cache, !(tokenKeys.isEmpty && startKeys.isEmpty && channelKeys.isEmpty && memberKeys.isEmpty) {
            cache.withRows(at: plannedAt) { cached in
                for token in tokenKeys where held.tokens[token] == nil {
                    guard let row = cached.tokens[token] else { continue }
                    held.tokens[token] = row
                    tokenKeys.remove(token)
                }
                for key in startKeys where held.startTokens[key] == nil {
                    guard let at = cached.startTokens[key] else { continue }
                    held.startTokens[key] = at
                    startKeys.remove(key)
                }
                // A channel not held yet is taken whole as cached; what it still does not tell is read.
                for channel in Set(channelKeys.union(memberKeys.map(\.first))) where held.channels[channel] == nil {
                    held.channels[channel] = cached.channels[channel]
                }
            }
            channelKeys = channelKeys.filter { held.channels[$0]?.complete != true }
            memberKeys = memberKeys.filter { !isKnown(member: $0) }
        }
        guard !tokenKeys.isEmpty || !startKeys.isEmpty || !channelKeys.isEmpty || !memberKeys.isEmpty else { return }
        let starts = Array(startKeys)
        let members = Array(memberKeys)
        var bindings = PostgresBindings(capacity: 6)
        bindings.append(Array(tokenKeys))
        bindings.append(starts.map(\.first))
        bindings.append(starts.map(\.second))
        bindings.append(Array(channelKeys))
        bindings.append(members.map(\.first))
        bindings.append(members.map(\.second))
        let rows = try connection.rows(Self.loadSQL, bindings, logger: logger)
        // Absent unless found.
        for token in tokenKeys where held.tokens[token] == nil { held.tokens.updateValue(nil, forKey: token) }
        for key in startKeys where held.startTokens[key] == nil { held.startTokens.updateValue(nil, forKey: key) }
        for key in memberKeys where !isKnown(member: key) {
            held.channels[key.first, default: Channel()].absent.insert(key.second)
        }
        var found: [String: [String: Int64]] = [:]
        for row in rows {
            let (kind, a, b, c, d) = try row.decode((Int32, String, String, Int64, Int64?).self)
            switch kind {
            case 0:
                if held.tokens[a] == .some(nil) { held.tokens[a] = TokenRow(activity: b, firstAt: c, deadAt: d) }
            case 1:
                let key = Pair(first: a, second: b)
                if held.startTokens[key] == .some(nil) { held.startTokens[key] = c }
            case 2:
                found[a, default: [:]][b] = c
            default:
                if held.channels[a]?.absent.contains(b) == true {
                    held.channels[a]?.absent.remove(b)
                    held.channels[a]?.since[b] = c
                }
            }
        }
        for channel in channelKeys {
            var known = held.channels[channel, default: Channel()]
            guard !known.complete else { continue }
            // Rows held are kept (changed since read, or added); rows known absent and not added stay absent.
            for (activity, since) in found[channel] ?? [:] where known.since[activity] == nil {
                if known.absent.contains(activity) { continue }
                known.since[activity] = since
            }
            known.absent = []
            known.complete = true
            held.channels[channel] = known
        }
    }

    /// Kinds: 0 a token (token, activity, first_at, dead_at); 1 a start token (installation, token, at); 2 a member
    /// of a whole channel and 3 a (channel, activity) row (channel, activity, since).
    private static let loadSQL = """
        SELECT 0, token, activity, first_at, dead_at FROM tokens WHERE token = ANY($1::text[])
        UNION ALL
        SELECT 1, s.installation, s.token, s.at, NULL::bigint
        FROM start_tokens s JOIN unnest($2::text[], $3::text[]) AS k(installation, token)
            ON s.installation = k.installation AND s.token = k.token
        UNION ALL
        SELECT 2, channel, activity, since, NULL::bigint FROM channel_members WHERE channel = ANY($4::text[])
        UNION ALL
        SELECT 3, m.channel, m.activity, m.since, NULL::bigint
        FROM channel_members m JOIN unnest($5::text[], $6::text[]) AS k(channel, activity)
            ON m.channel = k.channel AND m.activity = k.activity
        """

    /// Reads the summaries of `keys` in one statement; keys not found are remembered as absent.
    private mutating func loadSummaries(_ keys: Set<String>) throws {
        var keys = keys
        if let cache, !keys.isEmpty {
            cache.withRows(at: plannedAt) { cached in
                for key in keys where held.summaries[key] == nil {
                    guard let row = cached.summaries[key] else { continue }
                    held.summaries[key] = row
                    keys.remove(key)
                }
            }
        }
        guard !keys.isEmpty else { return }
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(Array(keys))
        let rows = try connection.rows(
            "SELECT \(SummaryRow.columns) FROM activities WHERE activity = ANY($1::text[])", bindings, logger: logger)
        for key in keys where held.summaries[key] == nil { held.summaries.updateValue(nil, forKey: key) }
        for row in rows {
            let summary = try Self.decodeSummary(row)
            if held.summaries[summary.activity] == .some(nil) { held.summaries[summary.activity] = summary }
        }
    }

    /// A row of `SummaryRow.columns`, as `SummaryRow.fetch` reads one.
    private static func decodeSummary(_ row: PostgresRow) throws -> ActivitySummary {
        let row = row.makeRandomAccess()
        func text(_ index: Int) throws -> String? { try row[index].decode(String?.self) }
        func int(_ index: Int) throws -> Int64? { try row[index].decode(Int64?.self) }
        var s = ActivitySummary(activity: try row[0].decode(String.self))
        s.attributesType = try text(1).map(PostgresText.unescape)
        s.installation = try text(2)
        s.pushType = try text(3)
        s.channel = try text(4)
        s.origin = try text(5)
        s.requestedAt = try int(6)
        s.startAt = try int(7)
        s.token = try text(8)
        s.tokenAt = try int(9)
        s.tokenPosition = try int(10)
        s.endedAt = try int(11)
        s.endedBy = try text(12)
        s.endPolicy = try text(13)
        s.endPolicyDate = try int(14)
        s.dismissedAt = try int(15)
        s.dismissedBy = try text(16)
        s.contentTimestamp = try int(17)
        s.staleAt = try int(18)
        s.events = try row[19].decode(Int64.self)
        s.firstPosition = try int(20)
        s.lastPosition = try int(21)
        s.lastAt = try int(22)
        s.factsAt = try int(23)
        s.intendedAt = try int(24)
        s.intendedPosition = try int(25)
        s.intendedHash = try row[26].decode(ByteBuffer?.self).map { Data($0.readableBytesView) }
        s.requests = try row[27].decode(Int64.self)
        s.doubts = try row[28].decode(Int64.self)
        return s
    }

    // MARK: Writing

    /// The changed rows (each in its final state: the write overwrites) and, with `position`, the projection's
    /// position, as one write; afterwards nothing is changed, and rows past `heldCapacity` are forgotten.
    private mutating func takeChanges(position: Int64?) -> PostgresProjectionWrite {
        var write = PostgresProjectionWrite(position: position)
        write.activities = dirtySummaries.compactMap { held.summaries[$0] ?? nil }
        for token in dirtyTokens {
            guard let row = held.tokens[token] ?? nil else { continue }
            write.tokens.append((token, row.activity, row.firstAt, row.deadAt))
        }
        for key in dirtyMembers {
            guard let since = held.channels[key.first]?.since[key.second] else { continue }
            write.members.append((key.first, key.second, since))
        }
        for key in dirtyStartTokens {
            guard let at = held.startTokens[key] ?? nil else { continue }
            write.startTokens.append((key.first, key.second, at))
        }
        dirtySummaries = []
        dirtyTokens = []
        dirtyMembers = []
        dirtyStartTokens = []
        if held.count > Self.heldCapacity {
            held = PostgresProjectionCache.Rows()
        }
        return write
    }

    /// Writes the changes now, in one statement of their own.
    private mutating func writeChanges(position: Int64?) throws {
        let write = takeChanges(position: position)
        guard !write.isEmpty else { return }
        var bindings = PostgresBindings()
        try write.bind(into: &bindings)
        _ = try connection.rows(PostgresProjectionWrite.standaloneSQL, bindings, logger: logger)
    }
}

/// The projection rows one append (or one part of a rebuild) writes: multi-row upserts into each table, each
/// column bound as one array (empty arrays write nothing), and the projection's position when there is one. Part of
/// the append's statement (`PostgresWriteParts`), or a statement of its own (`standaloneSQL`).
struct PostgresProjectionWrite: PostgresWriteParts {
    var activities: [ActivitySummary] = []
    /// (token, activity, first_at, dead_at)
    var tokens: [(String, String, Int64, Int64?)] = []
    /// (channel, activity, since)
    var members: [(String, String, Int64)] = []
    /// (installation, token, at)
    var startTokens: [(String, String, Int64)] = []
    var position: Int64?
    /// What to tell the cache once the write committed: every row the batch held, as of the position it wrote up
    /// to, and the position it was planned at (`PostgresProjectionCache.publish`).
    var publish: (cache: PostgresProjectionCache, rows: PostgresProjectionCache.Rows, plannedAt: Int64, position: Int64)?

    init(position: Int64? = nil) { self.position = position }

    func committed() {
        guard let publish else { return }
        publish.cache.publish(publish.rows, plannedAt: publish.plannedAt, position: publish.position)
    }

    var isEmpty: Bool {
        activities.isEmpty && tokens.isEmpty && members.isEmpty && startTokens.isEmpty && position == nil
    }

    /// The write alone (placeholders from $1; its `head` always there).
    static let standaloneSQL = "WITH head AS (SELECT 1)" + sql(placeholdersFrom: 1) + "\nSELECT 1"

    /// Plain overwrites: memory holds each row's final state.
    static func sql(placeholdersFrom first: Int) -> String {
        var next = first
        func placeholder(_ type: String) -> String {
            defer { next += 1 }
            return "$\(next)::\(type)"
        }
        func upsert(_ name: String, _ table: String, _ columns: [String], _ types: [String], key: [String]) -> String {
            let updates = columns.filter { !key.contains($0) }.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
            return """
                , \(name) AS (
                    INSERT INTO \(table) (\(columns.joined(separator: ", ")))
                    SELECT * FROM unnest(\(types.map { placeholder($0 + "[]") }.joined(separator: ", ")))
                    WHERE EXISTS (SELECT 1 FROM head)
                    ON CONFLICT (\(key.joined(separator: ", "))) DO UPDATE SET \(updates)
                )
                """
        }
        var sql = upsert("projected_activities", "activities", summaryColumns, summaryTypes, key: ["activity"])
        sql += upsert(
            "projected_tokens", "tokens", ["token", "activity", "first_at", "dead_at"], ["text", "text", "bigint", "bigint"],
            key: ["token"])
        sql += upsert(
            "projected_members", "channel_members", ["channel", "activity", "since"], ["text", "text", "bigint"],
            key: ["channel", "activity"])
        sql += upsert(
            "projected_start_tokens", "start_tokens", ["installation", "token", "at"], ["text", "text", "bigint"],
            key: ["installation", "token"])
        let name = placeholder("text")
        let position = placeholder("bigint")
        sql += """
            , projected_position AS (
                INSERT INTO projection_positions (name, position) SELECT \(name), \(position)
                WHERE \(position) IS NOT NULL AND EXISTS (SELECT 1 FROM head)
                ON CONFLICT (name) DO UPDATE SET position = excluded.position
            )
            """
        return sql
    }

    func bind(into bindings: inout PostgresBindings) throws {
        try Self.bindSummaries(activities, into: &bindings)
        bindings.append(tokens.map(\.0))
        bindings.append(tokens.map(\.1))
        bindings.append(tokens.map(\.2))
        try bindings.append(PostgresNullableArray(tokens.map(\.3)))
        bindings.append(members.map(\.0))
        bindings.append(members.map(\.1))
        bindings.append(members.map(\.2))
        bindings.append(startTokens.map(\.0))
        bindings.append(startTokens.map(\.1))
        bindings.append(startTokens.map(\.2))
        bindings.append(ActivityProjector.name)
        bindings.append(position)
    }

    /// The names of `SummaryRow.columns`, in order.
    private static let summaryColumns = SummaryRow.columns.split(separator: ",").map {
        $0.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The PostgreSQL type of each of `summaryColumns` (002_ledger.sql).
    private static let summaryTypes = summaryColumns.map { column -> String in
        switch column {
        case "activity", "attributes_type", "installation", "push_type", "channel", "origin", "token", "ended_by",
            "end_policy", "dismissed_by":
            return "text"
        case "intended_hash":
            return "bytea"
        default:
            return "bigint"
        }
    }

    /// The 29 arrays of `summaryColumns`, in order (as `SummaryRow.write` binds one row).
    private static func bindSummaries(_ rows: [ActivitySummary], into bindings: inout PostgresBindings) throws {
        func text(_ value: (ActivitySummary) -> String?) throws {
            try bindings.append(PostgresNullableArray(rows.map(value)))
        }
        func int(_ value: (ActivitySummary) -> Int64?) throws {
            try bindings.append(PostgresNullableArray(rows.map(value)))
        }
        bindings.append(rows.map(\.activity))
        try text { $0.attributesType.map(PostgresText.escape) }
        try text(\.installation)
        try text(\.pushType)
        try text(\.channel)
        try text(\.origin)
        try int(\.requestedAt)
        try int(\.startAt)
        try text(\.token)
        try int(\.tokenAt)
        try int(\.tokenPosition)
        try int(\.endedAt)
        try text(\.endedBy)
        try text(\.endPolicy)
        try int(\.endPolicyDate)
        try int(\.dismissedAt)
        try text(\.dismissedBy)
        try int(\.contentTimestamp)
        try int(\.staleAt)
        bindings.append(rows.map(\.events))
        try int(\.firstPosition)
        try int(\.lastPosition)
        try int(\.lastAt)
        try int(\.factsAt)
        try int(\.intendedAt)
        try int(\.intendedPosition)
        try bindings.append(
            PostgresNullableArray(rows.map { ($0.intendedState?.hash ?? $0.intendedHash).map { ByteBuffer(bytes: $0) } }))
        bindings.append(rows.map(\.requests))
        bindings.append(rows.map(\.doubts))
    }
}

/// The projection rows as this process's last committed append left them, valid at one head position: the next
/// append planned at that position takes the rows it needs from here instead of reading them (an append's reads
/// were ~1.5 ms of its ~6 ms per batch of 100; BENCHMARKS.md).
///
/// Rows are held only as committed state at `position`: a batch publishes what it held (everything it read at the
/// head it was planned at, changed by its own events) after its write committed at a head still the planned one,
/// so nothing else was committed in between. Any append, of any process, moves the head, so a cache at another
/// position than the one a batch is planned at is not used; a rebuild rewrites the same rows. Publishing after an
/// append planned elsewhere replaces the cache (its rows are exact at the new position), so a cache is never ahead
/// of what was committed.
final class PostgresProjectionCache: Sendable {
    struct Rows: Sendable {
        var summaries: [String: ActivitySummary?] = [:]
        var tokens: [String: PostgresProjectionRows.TokenRow?] = [:]
        var startTokens: [PostgresProjectionRows.Pair: Int64?] = [:]
        var channels: [String: PostgresProjectionRows.Channel] = [:]

        var count: Int { summaries.count + tokens.count + startTokens.count + channels.count }
    }

    /// Rows held at most; past it the cache starts over from the next batch.
    static let capacity = 65_536

    private let state = Mutex<(position: Int64, rows: Rows)?>(nil)

    /// Runs `body` on the rows when the cache holds the rows at `position` (not at all otherwise).
    func withRows(at position: Int64, _ body: (Rows) -> Void) {
        state.withLock { state in
            guard let state, state.position == position else { return }
            body(state.rows)
        }
    }

    /// A batch planned at `plannedAt` committed up to `position`, leaving `rows`.
    func publish(_ rows: Rows, plannedAt: Int64, position: Int64) {
        state.withLock { state in
            guard state?.position == plannedAt else {
                state = rows.count > Self.capacity ? nil : (position, rows)
                return
            }
            // In place (the cache's dictionaries are not copied).
            state!.position = position
            for (key, row) in rows.summaries { state!.rows.summaries[key] = row }
            for (key, row) in rows.tokens { state!.rows.tokens[key] = row }
            for (key, row) in rows.startTokens { state!.rows.startTokens[key] = row }
            // A channel the batch held it took whole from here (or read while the cache was elsewhere), so its
            // knowledge includes the cache's.
            for (key, channel) in rows.channels { state!.rows.channels[key] = channel }
            if state!.rows.count > Self.capacity { state = nil }
        }
    }
}
