/// Walks a sorted source a page at a time: `peek` the current element, `advance` past it. Memory is two pages:
/// while one is walked, the next is already being read (`fetch` runs in a task of its own), so the reading and
/// the walking overlap on two cores.
struct SortedCursor<Element: Sendable> {
    private let fetch: @Sendable (_ after: Element?) async throws -> [Element]
    private var page: [Element] = []
    private var index = 0
    /// The page after `page`, being read; nil once an empty page ended the source.
    private var following: Task<[Element], any Error>?

    /// `fetch(after)` returns the next page after the given element (nil: from the start); an empty page ends.
    /// The first page is read from here on.
    init(fetch: @escaping @Sendable (_ after: Element?) async throws -> [Element]) {
        self.fetch = fetch
        following = Task { try await fetch(nil) }
    }

    mutating func peek() async throws -> Element? {
        if index < page.count { return page[index] }
        guard let following else { return nil }
        page = try await following.value
        index = 0
        guard let last = page.last else {
            self.following = nil
            return nil
        }
        let fetch = self.fetch
        self.following = Task { try await fetch(last) }
        return page[0]
    }

    /// The current element when its page is in memory already, without suspending; nil means "call `peek`".
    var ready: Element? { index < page.count ? page[index] : nil }

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
