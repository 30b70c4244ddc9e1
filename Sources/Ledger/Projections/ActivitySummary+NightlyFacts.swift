import ActivityModel
import Foundation

/// The facts `NightlyFacts` reads, kept with the same order-insensitive rules as the rest of the row.
extension ActivitySummary {
    /// Notes an own event that can change a fold (all but `reconcile`, which only counts).
    mutating func noteFact(at: Int64) {
        factsAt = max(factsAt ?? at, at)
    }

    /// The fold's intended content is the last content sent in (at, position) order, whatever became of it.
    mutating func noteIntended(_ state: ContentState, at: Int64, position: Int64) {
        if let intendedAt, let intendedPosition, (intendedAt, intendedPosition) > (at, position) { return }
        intendedAt = at
        intendedPosition = position
        intendedState = state
    }

    /// An update's or end's content: intended whatever happens to it; one the device drops by itself
    /// (oversize, a timestamp over 8 h ahead) makes its verdict `rejected`, so the nightly job must fold.
    mutating func noteSent(_ content: ProjectionEvent.Content, timestamp: Int64, at: Int64, position: Int64) {
        noteIntended(content.state, at: at, position: position)
        let limit: Int64 = 1000
        let ahead = timestamp > Int64.max / limit || timestamp < Int64.min / limit
            || timestamp * limit > at + 8 * 3_600_000
        if content.isTooLarge || ahead { noteDoubt(.unsendable) }
    }

    mutating func noteDoubt(_ doubt: NightlyFacts.Doubt) {
        doubts |= doubt.rawValue
    }
}
