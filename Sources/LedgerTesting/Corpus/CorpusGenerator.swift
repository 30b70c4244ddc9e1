/// A seeded generator of realistic Live Activity events (SPEC §2): rides, deliveries and live scores, each
/// an activity stream with a request, its push token, updates with their APNs pushes, device observations
/// and an end. Activities overlap in time; events come out in `at` order within bounded memory.
///
/// ```swift
/// for line in CorpusGenerator(seed: 7, activities: 1_000, eventsPerActivity: 20).lines() { … }
/// ```
public struct CorpusGenerator: Sequence, Sendable {
    public let seed: UInt64
    public let activities: Int
    public let eventsPerActivity: Int
    /// Unix milliseconds of the first request.
    public let start: Int64

    public init(seed: UInt64, activities: Int, eventsPerActivity: Int, start: Int64 = 1_763_672_400_000) {
        self.seed = seed
        self.activities = Swift.max(0, activities)
        self.eventsPerActivity = Swift.max(1, eventsPerActivity)
        self.start = start
    }

    /// Total events the sequence yields.
    public var count: Int { activities * eventsPerActivity }

    /// The events as JSON Lines (without the newline).
    public func lines() -> LazyMapSequence<CorpusGenerator, String> { lazy.map(\.line) }

    public func makeIterator() -> Iterator { Iterator(self) }

    /// Generates activities in waves and yields each wave sorted by time.
    public struct Iterator: IteratorProtocol, Sendable {
        private static let wave = 64
        private let corpus: CorpusGenerator
        private var random: SeededRandom
        private var nextActivity = 0
        private var buffer: [CorpusEvent] = []
        private var index = 0

        init(_ corpus: CorpusGenerator) {
            self.corpus = corpus
            random = SeededRandom(seed: corpus.seed)
        }

        public mutating func next() -> CorpusEvent? {
            if index == buffer.count {
                guard nextActivity < corpus.activities else { return nil }
                buffer.removeAll(keepingCapacity: true)
                index = 0
                let end = Swift.min(corpus.activities, nextActivity + Self.wave)
                for number in nextActivity..<end {
                    let startAt = corpus.start + Int64(number) * 3_000 + Int64.random(in: 0..<2_000, using: &random)
                    var script = ActivityScript(number: number, startAt: startAt, random: &random)
                    buffer.append(contentsOf: script.events(count: corpus.eventsPerActivity, random: &random))
                }
                nextActivity = end
                buffer.sort { ($0.at, $0.stream) < ($1.at, $1.stream) }
            }
            defer { index += 1 }
            return buffer[index]
        }
    }
}
