import ActivityModel
import Foundation
import GRDB
import LedgerStore
import Logging
import Synchronization

/// The inline projection: keeps `activities`, `tokens`, `channel_members` and `start_tokens` equal to a fold of
/// the log. The store calls it inside the append transaction, so rows and the saved position commit together.
///
/// Appends hand their already-decoded events over through `pending` so the hot path does not parse its own
/// payloads a second time; anything not handed over (a rebuild, a duplicate race) is decoded from the payload.
final class ActivityProjector: InlineProjector {
    static let name = "activities"


    /// A decoded event as `apply` reads it, made by the appender (or an import's decoding thread), not by the
    /// writer.
    struct Handed: Sendable {
        let id: String?
        let event: ProjectionEvent

        /// `hashingStates` replaces content states by their hashes now. Worth it where appenders run in parallel
        /// beside the writer (HTTP); an import's single decoding thread is better off leaving the writer to hash
        /// only the states rows end up with (measured: hashing every state there made the import 8 % slower).
        init(_ event: LedgerEvent, hashingStates: Bool) {
            id = event.id
            let projected = ProjectionEvent(event)
            self.event = hashingStates ? projected.hashingStates() : projected
        }
    }

    /// Handed-over events by stored (app-qualified) id, their names already qualified.
    private let pending = Mutex<[String: ProjectionEvent]>([:])
    private let tables: ProjectionTables
    private let logger: Logger?

    init(tables: ProjectionTables = .live, logger: Logger? = nil) {
        self.tables = tables
        self.logger = logger
    }

    /// Makes decoded events of `app` available to the next `apply`, keyed by stored event id.
    func handOver(_ events: [LedgerEvent], app: String) {
        handOver(events.map { Handed($0, hashingStates: true) }, app: app)
    }

    /// The same for events already converted off the writer (an import's decoding thread).
    func handOver(_ events: [Handed], app: String) {
        pending.withLock { map in
            for event in events {
                if let id = event.id { map[Namespaced.qualify(id, app: app)] = event.event.qualified(app: app) }
            }
        }
    }

    /// Drops what `handOver` left behind when an append failed before the projector ran.
    func withdraw(_ events: [LedgerEvent], app: String) {
        pending.withLock { map in
            for event in events { if let id = event.id { map[Namespaced.qualify(id, app: app)] = nil } }
        }
    }

    func apply(_ events: [RecordedEvent], db: Database) throws {
        guard !events.isEmpty else { return }
        let projected: [ProjectionEvent?] = pending.withLock { map in
            events.map { recorded in
                if let handed = map.removeValue(forKey: recorded.id) { return handed }
                do {
                    return try ProjectionDecoder.decode(recorded)
                } catch {
                    // Only rows written before every door validated can get here (appends refuse payloads that
                    // do not decode): report the row and project the rest, never fail the whole log for it.
                    logger?.error("a stored event does not decode; projections skip it", metadata: [
                        "ledger.position": "\(recorded.position)", "ledger.error": "\(error)",
                    ])
                    return nil
                }
            }
        }
        guard let last = events.last else { return }
        var batch = ProjectionBatch(db: db, tables: tables)
        for index in events.indices {
            guard let event = projected[index] else { continue }
            try batch.apply(event, position: events[index].position)
        }
        try batch.flush()
        try Self.savePosition(last.position, tables: tables, db: db)
    }

    /// Saves the position up to which `tables` hold the projection (in the transaction that wrote the rows).
    static func savePosition(_ position: Int64, tables: ProjectionTables, db: Database) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO \(tables.positions) (name, position) VALUES (?, ?)")
            .execute(arguments: [name, position])
    }

    /// A stored event as its app sees it: id and stream without the app qualifier (`Namespaced`).
    static func decode(_ recorded: RecordedEvent) throws -> LedgerEvent {
        do {
            return try EventCodec.decodePayload(
                recorded.payload, id: Namespaced.name(recorded.id), stream: Namespaced.name(recorded.stream),
                type: recorded.type, at: Instant(milliseconds: recorded.at)
            )
        } catch {
            throw LedgerError(.storage, "position \(recorded.position): stored payload does not decode: \(error)")
        }
    }
}

/// The projection's table names (one place to spell them; `rebuild` empties them all).
struct ProjectionTables: Sendable {
    var activities: String
    var tokens: String
    var channelMembers: String
    var startTokens: String
    var positions: String

    static let live = ProjectionTables(
        activities: "activities", tokens: "tokens", channelMembers: "channel_members",
        startTokens: "start_tokens", positions: "projection_positions"
    )

    var names: [String] { [activities, tokens, channelMembers, startTokens, positions] }
}
