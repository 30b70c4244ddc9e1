import ActivityModel
import Foundation
import GRDB
import LedgerStore

extension Ledger {
    /// Calls `body` with the interchange JSON line (no newline) of every event after `position`, in log order.
    /// The lines re-import into an equal log (same ids, streams, types, times and data).
    /// `body` returns false to stop.
    public func exportLines(after position: Int64 = 0, _ body: ([UInt8], RecordedEvent) throws -> Bool) throws {
        try store.forEachEvent(after: position) { recorded in
            let event = try ActivityProjector.decode(recorded)
            return try body(EventCodec.encode(event), recorded)
        }
    }
}
