import ActivityModel
import Foundation
import LedgerStore

/// What the ledger's queries read, inside one consistent snapshot of one ledger: a read transaction of the SQLite
/// file (`SQLiteSnapshot`), or a REPEATABLE READ transaction on PostgreSQL (`PostgresSnapshot`). Every query of
/// `Ledger` (state, timeline, audits, lists, feed, resync, nightly) is written once against this protocol, so both
/// backends answer the same bytes for the same log (`LedgerConformanceTests`).
///
/// Names are stored names: streams, ids and projection keys qualified by their app (`Namespaced`).
/// Calls block their thread until answered; ``Ledger/read(_:)`` runs them on ``Ledger/readThreads`` — for a file
/// with ``LedgerConfiguration/queriesOnCallerThread``, one query at a time on the asking task's own thread.
protocol LedgerSnapshot {
    // MARK: The log

    /// The highest position written (0 when empty).
    func lastPosition() throws -> Int64
    /// The event stored under `id`, if any.
    func event(id: String) throws -> RecordedEvent?
    /// Events of `stream` with `at` ≤ `atMost`, in version order; their hashes may be left out (empty): a state
    /// needs none.
    func events(stream: String, atMost: Int64) throws -> [RecordedEvent]
    /// Every event of `stream`, in version order; with `hashes`, each carries its chain hash.
    func events(stream: String, hashes: Bool) throws -> [RecordedEvent]
    /// Every event after `position`, in position order, until `body` returns false.
    func forEachEvent(after position: Int64, _ body: (RecordedEvent) throws -> Bool) throws
    /// The chain head.
    func digest() throws -> Digest
    /// Recomputes the chain (SPEC §6); `progress` gets (rows checked, rows to check) now and then.
    func verify(upTo digest: Digest?, progress: (@Sendable (Int64, Int64) -> Void)?) throws -> VerifyReport

    // MARK: The projections

    /// The channels an activity (projection key) is subscribed to, in byte order.
    func channels(following activity: String) throws -> [String]
    /// The activities subscribed to `channel`, in byte order: all, or `limit` of them after `after`.
    func members(of channel: String, after: String?, limit: Int?) throws -> [String]
    /// How many activities are subscribed to `channel`.
    func memberCount(of channel: String) throws -> Int
    /// The activity that had `token` (any token it ever had), if one did.
    func activity(withToken token: String) throws -> String?
    /// The activities of an installation (projection key), in byte order.
    func activities(ofInstallation installation: String) throws -> [String]
    /// The activity keys `ActivityCandidates` selects.
    func candidates(_ query: ActivityCandidates) throws -> [String]
    /// A page of the activity rows the nightly job merges with the truth (`NightlyScan.page`).
    func nightlyRows(after: String, app: String?, limit: Int) throws -> [NightlyScan.ActivityRow]
    /// The JSON text of the report recorded for a nightly run key (`ReconcileRuns.key`), if any; throws
    /// `StoreError.corruptPayload` for a stored report that no longer decompresses.
    func runReport(_ key: String) throws -> [UInt8]?
}

/// The projection rows an `ActivityFilter` page may contain: conditions every activity in the asked phase meets,
/// so that the fold of each candidate decides. Built once; each backend renders it in its own SQL dialect.
struct ActivityCandidates {
    var filter: ActivityFilter
    var asOf: Instant
    /// Keys after this one (a projection key).
    var after: String
    var limit: Int

    /// The query as SQL with `?` placeholders and its arguments, in `dialect`.
    func sql(_ dialect: SQLDialect) -> PortableSQL {
        let t = asOf.milliseconds
        let hour: Int64 = 3_600_000
        var sql = PortableSQL("SELECT a.activity FROM activities a WHERE a.activity > ? AND a.requested_at IS NOT NULL", after)
        sql += Self.namespaceCondition("a.activity", app: filter.app, dialect)
        if let installation = filter.installation {
            sql += PortableSQL(" AND a.installation = ?", Ledger.key(installation, app: filter.app))
        }
        if let type = filter.attributesType { sql += PortableSQL(" AND a.attributes_type = ?", type) }
        if let token = filter.token {
            sql += PortableSQL(
                " AND a.activity IN (SELECT activity FROM tokens WHERE token = ?)", Ledger.key(token, app: filter.app))
        }
        if let prefix = filter.tokenPrefix {
            // Hex digits sort below 0x7F, so the tokens that start with the prefix are one range of the index.
            let low = Ledger.key(prefix, app: filter.app)
            sql += PortableSQL(" AND a.activity IN (SELECT activity FROM tokens WHERE token >= ? AND token < ?", low, low + "\u{7F}")
            sql += Self.namespaceCondition("token", app: filter.app, dialect)
            sql += PortableSQL(")")
        }
        if let channel = filter.channel {
            sql += PortableSQL(
                " AND a.activity IN (SELECT activity FROM channel_members WHERE channel = ?)",
                Ledger.key(channel, app: filter.app))
        }
        switch filter.phase {
        case .pending?:
            sql += PortableSQL(" AND a.start_at > ?", t)
        case .active?, .stale?:
            sql += PortableSQL(
                """
                 AND a.start_at <= ? AND a.start_at + ? > ?
                 AND (a.ended_at IS NULL OR a.ended_at > ?) AND (a.dismissed_at IS NULL OR a.dismissed_at > ?)
                """, t, 8 * hour, t, t, t)
        case .ended?, .dismissed?, nil:
            sql += PortableSQL(" AND a.requested_at <= ?", t)
        }
        sql += PortableSQL(" ORDER BY a.activity LIMIT ?", Int64(limit))
        return sql
    }

    /// `column` (a projection key) is in `app`'s namespace: an index range for an app (`app` U+001F … up to
    /// `app` U+0020), keys without U+001F for the app-less namespace.
    static func namespaceCondition(_ column: String, app: String?, _ dialect: SQLDialect) -> PortableSQL {
        guard let app, !app.isEmpty else {
            switch dialect {
            case .sqlite: return PortableSQL(" AND instr(\(column), char(31)) = 0")
            case .postgres: return PortableSQL(" AND strpos(\(column), chr(31)) = 0")
            }
        }
        return PortableSQL(" AND \(column) >= ? AND \(column) < ?", app + "\u{1F}", app + " ")
    }
}

/// The nightly job's page of activity rows, in both dialects.
///
/// The channel fact ("its push type is a channel, or it subscribed to one") is the row's push type (unknown counts
/// as a channel) or a `channel_members` row: the members of a page are one range read of that table's activity
/// index (`membersSQL`), not a probe per row (a million probes were ~15 % of SQLite's time reading the rows).
enum NightlyRowsQuery {
    static func sql(after: String, app: String?, limit: Int, _ dialect: SQLDialect) -> PortableSQL {
        var sql = PortableSQL(
            """
            SELECT a.activity, a.requested_at, a.ended_at, a.dismissed_at, a.start_at, a.facts_at, a.intended_hash,
                a.requests, a.doubts, a.push_type = 'channel'
            FROM activities a
            WHERE a.activity > ?
            """, after)
        sql += ActivityCandidates.namespaceCondition("a.activity", app: app, dialect)
        sql += PortableSQL(" ORDER BY a.activity LIMIT ?", Int64(limit))
        return sql
    }

    /// The activities of keys after `after` up to `last` (a page's range) that have a `channel_members` row.
    static func membersSQL(after: String, through last: String) -> PortableSQL {
        PortableSQL("SELECT DISTINCT activity FROM channel_members WHERE activity > ? AND activity <= ?", after, last)
    }

    /// Completes the channel fact of a page of rows read after `after`: `fetch` runs `membersSQL` over its range.
    static func markMembers(
        _ rows: inout [NightlyScan.ActivityRow], after: String, fetch: (PortableSQL) throws -> [String]
    ) rethrows {
        guard let last = rows.last?.activity else { return }
        let members = try fetch(membersSQL(after: after, through: last))
        guard !members.isEmpty else { return }
        let memberSet = Set(members)
        for index in rows.indices where memberSet.contains(rows[index].activity) { rows[index].facts.channel = true }
    }
}

/// The two SQL dialects the ledger speaks.
enum SQLDialect { case sqlite, postgres }

/// SQL text with `?` placeholders and its arguments, built by appending parts.
struct PortableSQL {
    enum Argument: Sendable, Hashable {
        case text(String)
        case int(Int64)
    }

    var text: String
    var arguments: [Argument]

    init(_ text: String, _ arguments: Argument...) {
        self.text = text
        self.arguments = arguments
    }

    static func += (lhs: inout PortableSQL, rhs: PortableSQL) {
        lhs.text += rhs.text
        lhs.arguments += rhs.arguments
    }

    /// The text with PostgreSQL's numbered placeholders (`$1`, `$2`, …) in place of `?`.
    var numbered: String {
        var out = ""
        var index = 0
        for character in text {
            if character == "?" {
                index += 1
                out += "$\(index)"
            } else {
                out.append(character)
            }
        }
        return out
    }
}

extension PortableSQL {
    init(_ text: String, _ first: String, _ rest: String...) {
        self.init(text: text, arguments: [.text(first)] + rest.map(Argument.text))
    }

    init(_ text: String, _ first: Int64, _ rest: Int64...) {
        self.init(text: text, arguments: [.int(first)] + rest.map(Argument.int))
    }

    init(text: String, arguments: [Argument]) {
        self.text = text
        self.arguments = arguments
    }
}
