import ActivityModel
import Ledger

/// The `cursor` of `GET /v1/updates/{id}/audit`: the ledger's page cursor (``PageCursor``) behind a kind prefix.
///
/// Both lists page by activity id with the same ledger cursor, so `GET /v1/activities`' `nextCursor` used to be
/// taken here as a place in the subscriber list (a silent, wrong page), and this one there. The prefix holds a `.`,
/// which no ``PageCursor`` does, so each endpoint refuses the other's cursor (400 naming `cursor`).
enum SubscriberCursor {
    private static let prefix = "s."

    /// The cursor to hand out for the ledger's `nextCursor`.
    static func wrap(_ cursor: String) -> String { prefix + cursor }

    /// The ledger's cursor inside `text`, or nil when `text` is not one ``wrap(_:)`` made from a ledger cursor.
    static func unwrap(_ text: String) -> String? {
        guard text.hasPrefix(prefix) else { return nil }
        let cursor = String(text.dropFirst(prefix.count))
        return PageCursor.decode(cursor) == nil ? nil : cursor
    }

    /// `audit` (an ``UpdateAudit``'s JSON) with its `nextCursor` wrapped.
    static func wrapping(_ audit: JSONValue) -> JSONValue {
        guard case .object(var object) = audit, case .string(let next)? = object["nextCursor"] else { return audit }
        object["nextCursor"] = .string(wrap(next))
        return .object(object)
    }
}
