/// Walks a sorted source a page at a time: `peek` the current element, `advance` past it. Memory is one page.
/// Pages are fetched asynchronously (the ledger's through GRDB's async reads, off Swift's cooperative threads).
struct SortedCursor<Element> {
    private let fetch: (_ after: Element?) async throws -> [Element]
    private var page: [Element] = []
    private var index = 0
    private var exhausted = false
    private var last: Element?

    /// `fetch(after)` returns the next page after the given element (nil: from the start); an empty page ends.
    init(fetch: @escaping (_ after: Element?) async throws -> [Element]) {
        self.fetch = fetch
    }

    mutating func peek() async throws -> Element? {
        if index < page.count { return page[index] }
        guard !exhausted else { return nil }
        page = try await fetch(last)
        index = 0
        if page.isEmpty {
            exhausted = true
            return nil
        }
        last = page.last
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
}
