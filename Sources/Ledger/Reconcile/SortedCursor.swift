/// Walks a sorted source a page at a time: `peek` the current element, `advance` past it. Memory is two pages:
/// while one is walked, the next is already being read (`fetch` runs in a task of its own), so the reading and
/// the walking overlap on two cores.
struct SortedCursor<Element: Sendable> {
    private let fetch: @Sendable (_ after: Element?) async throws -> [Element]
    private var page: [Element] = []
    private var index = 0
    private var started = false
    private var exhausted = false
    /// The page after `page`, being read.
    private var following: Task<[Element], any Error>?

    /// `fetch(after)` returns the next page after the given element (nil: from the start); an empty page ends.
    init(fetch: @escaping @Sendable (_ after: Element?) async throws -> [Element]) {
        self.fetch = fetch
    }

    mutating func peek() async throws -> Element? {
        if index < page.count { return page[index] }
        guard !exhausted else { return nil }
        if !started {
            started = true
            page = try await fetch(nil)
        } else {
            page = try await following?.value ?? []
        }
        index = 0
        guard let last = page.last else {
            exhausted = true
            following = nil
            return nil
        }
        let fetch = self.fetch
        following = Task { try await fetch(last) }
        return page[0]
    }

    mutating func advance() { index += 1 }

    /// The rest of the current page, consumed (for batch work on the ledger side).
    mutating func takePage() async throws -> [Element] {
        guard try await peek() != nil else { return [] }
        let rest = Array(page[index...])
        index = page.count
        return rest
    }

    /// Stops reading ahead (a scan that ends early, or failed).
    func cancel() { following?.cancel() }
}
