import ActivityModel
import Foundation
import GRDB
import LedgerPostgres
import LedgerStore

extension Ledger {
    /// Calls `body` with the interchange JSON line (no newline) of every event of `app`'s namespace (nil: the
    /// app-less one) after `position`, in log order. The lines re-import into an equal log (same ids, streams,
    /// types, times and data) in any namespace. `body` returns false to stop.
    ///
    /// A stored row that does not decode (a file written by an older version that let one in) is passed to
    /// `undecodable` and skipped, so one bad row never takes the rest of the log with it; without `undecodable`
    /// it stops the export with its error.
    public func exportLines(
        after position: Int64 = 0, app: String? = nil,
        undecodable: ((_ position: Int64, _ error: LedgerError) -> Void)? = nil,
        _ body: ([UInt8], RecordedEvent) throws -> Bool
    ) async throws {
        let namespace = app ?? ""
        func each(_ recorded: RecordedEvent) throws -> Bool {
            let line: [UInt8]?
            do {
                line = try Self.exportLine(recorded, app: namespace)
            } catch let error as LedgerError {
                guard let undecodable else { throw error }
                undecodable(recorded.position, error)
                return true
            }
            guard let line else { return true }
            return try body(line, recorded)
        }
        switch storage {
        case .file(let store):
            try store.forEachEvent(after: position) { try each($0) }
        case .postgres(let postgres):
            // Pages by position: rows are never changed in place, so the pages are one consistent log.
            var after = position
            while true {
                let page = try await postgres.log.events(after: after, limit: 2_048)
                guard let last = page.last?.position else { return }
                for recorded in page { guard try each(recorded) else { return } }
                after = last
            }
        }
    }

    /// The interchange line of one stored event as `app` (`""`: the app-less namespace) sees it, nil when the event
    /// is another app's; throws a storage error when its payload does not decode. Any backend's events
    /// (`EventLog`) export through this.
    public static func exportLine(_ recorded: RecordedEvent, app: String) throws -> [UInt8]? {
        guard Namespaced.belongs(recorded.stream, to: app) else { return nil }
        return EventCodec.encode(try ActivityProjector.decode(recorded))
    }
}
