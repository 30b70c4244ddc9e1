import ActivityModel
import Foundation
import GRDB
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
    ) throws {
        let namespace = app ?? ""
        try store.forEachEvent(after: position) { recorded in
            guard Namespaced.belongs(recorded.stream, to: namespace) else { return true }
            let event: LedgerEvent
            do {
                event = try ActivityProjector.decode(recorded)
            } catch let error as LedgerError {
                guard let undecodable else { throw error }
                undecodable(recorded.position, error)
                return true
            }
            return try body(EventCodec.encode(event), recorded)
        }
    }
}
