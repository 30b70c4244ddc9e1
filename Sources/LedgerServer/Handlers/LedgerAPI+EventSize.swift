import ActivityModel
import Ledger

/// SPEC §2 refuses "a payload over the configured size limit" on every way in. `import` refuses a line over
/// the ledger's `maxEventBytes`; HTTP appends refuse an event whose compact JSON is over the same limit, so that
/// nothing the server accepts is refused when its export is imported again.
extension LedgerAPI {
    /// Refuses the first event (index in request order) over the limit, naming it (422).
    static func checkSizes(_ events: [JSONValue], limit: Int) throws {
        for (index, event) in events.enumerated() {
            // The unescaped length is a cheap lower bound; escapes can at most sextuple it (`\u00XX`), so only
            // an event that might be over the limit is written out to measure it.
            guard lowerBound(event) > limit / 6 else { continue }
            let bytes = event.compactBytes.count
            if bytes > limit { throw oversize(index: index, bytes: bytes, limit: limit) }
        }
    }

    private static func oversize(index: Int, bytes: Int, limit: Int) -> LedgerError {
        LedgerError(
            .badInput, "the event is \(bytes) bytes, over the limit of \(limit) bytes per event",
            field: "events[\(index)]")
    }

    /// Bytes of `value`'s compact JSON not counting escapes.
    private static func lowerBound(_ value: JSONValue) -> Int {
        switch value {
        case .null: 4
        case .bool(let flag): flag ? 4 : 5
        case .number(let number): number.text.utf8.count
        case .string(let text): text.utf8.count + 2
        case .array(let elements): elements.reduce(1 + max(elements.count, 1)) { $0 + lowerBound($1) }
        case .object(let object):
            object.members.reduce(1 + max(object.members.count, 1)) { $0 + $1.key.utf8.count + 3 + lowerBound($1.value) }
        }
    }
}
