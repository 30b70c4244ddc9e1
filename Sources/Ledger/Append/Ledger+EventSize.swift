import ActivityModel
import LedgerStore

/// SPEC §2 refuses "a payload over the configured size limit" on every way in. What counts is the event as the
/// ledger keeps and exports it — its interchange line with its id (generated when the caller sent none), its
/// source and its time as RFC 3339 — so that every exported line imports again. An input line can be shorter
/// than that (`"at":0`, no id), so checking only what arrived is not enough.
extension Ledger {
    /// The size in bytes of `event`'s exported line when it is over `limit`, else nil. `stored` is its storage
    /// form (`newEvent`): the line is only written out when the payload alone comes near the limit.
    static func exportedSizeOver(_ limit: Int, _ event: LedgerEvent, stored: NewEvent) -> Int? {
        // The envelope (id, stream, type, at) around the payload's source and data is far below 4 KiB unless the
        // stream name or id is itself huge, which the payload check below does not see: count them in.
        let envelope = 4_096 + stored.id.utf8.count + stored.stream.utf8.count
        guard stored.payload.count + envelope > limit else { return nil }
        let size = EventCodec.encode(event).count
        return size > limit ? size : nil
    }

    /// The refusal for an event over the limit as stored.
    static func oversize(_ size: Int, limit: Int, line: Int? = nil, field: String? = nil) -> LedgerError {
        LedgerError(
            .badInput,
            "the event is \(size) bytes as the ledger stores and exports it (with its id, source and RFC 3339 time), "
                + "over the limit of \(limit) bytes per event",
            line: line, field: field)
    }
}
