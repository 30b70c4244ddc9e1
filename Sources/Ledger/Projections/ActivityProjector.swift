import ActivityModel
import Foundation
import GRDB
import LedgerStore
import Logging

/// The inline projection: keeps `activities`, `tokens`, `channel_members` and `start_tokens` equal to a fold of
/// the log. The store calls it inside the append transaction, so rows and the saved position commit together.
///
/// Appends attach their already-decoded events to the events they store (`attach`, `NewEvent.projectorInput`),
/// and the store hands each back with the row written from it, so the hot path does not parse its own payloads a
/// second time. Anything without one (a rebuild, a catch-up, a replay) is decoded from the payload.
final class ActivityProjector: InlineProjector {
    static let name = "activities"

    /// A decoded event as `apply` reads it, made by the appender (or an import's decoding thread), not by the
    /// writer. A class, so that attaching it (`ProjectorInput`) copies a reference and boxes nothing.
    final class Handed: Sendable {
        let event: ProjectionEvent

        /// `hashingStates` replaces content states by their hashes now. Worth it where appenders run in parallel
        /// beside the writer (HTTP); an import's single decoding thread is better off leaving the writer to hash
        /// only the states rows end up with (measured: hashing every state there made the import 8 % slower).
        init(_ event: LedgerEvent, hashingStates: Bool) {
            let projected = ProjectionEvent(event)
            self.event = hashingStates ? projected.hashingStates() : projected
        }

        private init(event: ProjectionEvent) { self.event = event }

        /// The event with its names qualified by `app` (itself in the app-less namespace).
        func qualified(app: String) -> Handed { app.isEmpty ? self : Handed(event: event.qualified(app: app)) }
    }

    private let tables: ProjectionTables
    private let logger: Logger?

    init(tables: ProjectionTables = .live, logger: Logger? = nil) {
        self.tables = tables
        self.logger = logger
    }

    /// Attaches `events`, decoded by the caller, to their storage forms `stored` (same order, `app`'s namespace).
    func attach(_ events: [LedgerEvent], app: String, to stored: inout [NewEvent]) {
        precondition(events.count == stored.count, "one decoded event per stored event")
        for index in stored.indices {
            Self.attach(Handed(events[index], hashingStates: true), app: app, to: &stored[index])
        }
    }

    /// Attaches one event converted by the caller: an import's decoding thread does this for each event, off
    /// the writer.
    static func attach(_ handed: Handed, app: String, to stored: inout NewEvent) {
        stored.projectorInput = ProjectorInput(handed.qualified(app: app))
    }

    func apply(_ events: ArraySlice<RecordedEvent>, inputs: [ProjectorInput], db: Database) throws {
        try apply(events, inputs: inputs, to: SQLiteProjectionRows(db: db, tables: tables))
    }

    /// Applies `events` (with what their appender attached, `inputs`, parallel to them; none for events read back
    /// from the log) to `rows`, and saves the position of the last. Returns `rows` as the batch left them (a
    /// deferred `PostgresProjectionRows` holds its write).
    @discardableResult
    func apply<Rows: ProjectionRows>(
        _ events: ArraySlice<RecordedEvent>, inputs: [ProjectorInput] = [], to rows: Rows
    ) throws -> Rows {
        guard let last = events.last?.position else { return rows }
        var projected: [(ProjectionEvent, Int64)] = []
        projected.reserveCapacity(events.count)
        // By index, reading the fields in place: iterating copied every event (a retain and release of each field).
        for index in events.indices {
            let offset = index - events.startIndex
            let handed = offset < inputs.count ? inputs[offset].value as? Handed : nil
            guard let event = handed?.event ?? decoded(events[index]) else { continue }
            projected.append((event, events[index].position))
        }
        var batch = ProjectionBatch(rows)
        try batch.prepare(projected.map(\.0))
        for (event, position) in projected { try batch.apply(event, position: position) }
        try batch.flush()
        var store = batch.store
        try store.savePosition(last)
        return store
    }

    /// A stored event that came without its decoded form, decoded from its payload.
    private func decoded(_ recorded: RecordedEvent) -> ProjectionEvent? {
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

    /// A stored event as its app sees it: id and stream without the app qualifier (`Namespaced`).
    static func decode(_ recorded: RecordedEvent) throws -> LedgerEvent {
        var decoder = StoredEventDecoder()
        return try decoder.decode(recorded)
    }
}

/// `ActivityProjector.decode` for a run of stored rows: the rows of one stream share its stored name, which is
/// split and parsed once for the run instead of once per row (with the type's name, ~7 % of a `state --at` of a
/// 100-event activity).
struct StoredEventDecoder {
    private var streams = ProjectionDecoder.StreamMemo()

    init() {}

    mutating func decode(_ recorded: RecordedEvent) throws -> LedgerEvent {
        do {
            let stream = streams.resolve(recorded.stream).name
            let at = Instant(milliseconds: recorded.at)
            let id = Namespaced.name(recorded.id)
            if let stream, let type = ProjectionDecoder.eventType(recorded.type) {
                return try EventCodec.decodePayload(recorded.payload, id: id, stream: stream, type: type, at: at)
            }
            // A stream or type name that does not parse: the codec words why.
            return try EventCodec.decodePayload(
                recorded.payload, id: id, stream: Namespaced.name(recorded.stream), type: recorded.type, at: at)
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
