/// What an HTTP/1 connection is waiting for, and until when: the decisions of the read timeouts, with no I/O
/// (``RequestTimeoutHandler`` feeds it what it sees and carries out what it says).
///
/// - idle: no request in progress and no byte of the next one: the keep-alive wait (`idle`).
/// - head: some bytes of a request head arrived, not all of it (`head`, counted from the first byte or from the
///   end of the previous response, whichever is later).
/// - body: the head arrived, the body has not ended (`body`, counted from the head: a trickled body is cut too).
/// - answering: every request read, a response still being produced (a feed long-poll): no read timeout.
struct ConnectionTimeoutState: Sendable {
    enum Wait: Equatable, Sendable {
        case idle, head, body, answering
    }

    /// What to do once the current wait has run out.
    enum Expiry: Equatable, Sendable {
        /// Nothing is owed to the client: close.
        case close
        /// A head that never completed: answer 408 on the raw connection, then close.
        case refuseHead
        /// A body that never completed: fail the body the handler is reading, so that it answers 408; the
        /// connection closes after that response.
        case refuseBody
    }

    let idle: Duration?
    let head: Duration?
    let body: Duration?
    private var requestOpen = false
    private var headStarted = false
    private var headsRead = 0
    private var responsesStarted = 0
    private var responsesEnded = 0
    private var since: ContinuousClock.Instant
    /// Set once a body wait ran out: the response that follows closes the connection.
    private(set) var closeAfterResponse = false

    /// A zero or negative duration turns that timeout off.
    init(idle: Duration, head: Duration, body: Duration, now: ContinuousClock.Instant) {
        self.idle = idle > .zero ? idle : nil
        self.head = head > .zero ? head : nil
        self.body = body > .zero ? body : nil
        self.since = now
    }

    var wait: Wait {
        if requestOpen { return .body }
        if responsesEnded < headsRead { return .answering }
        return headStarted ? .head : .idle
    }

    /// When the current wait runs out; nil when it never does.
    var deadline: ContinuousClock.Instant? {
        let limit: Duration? =
            switch wait {
            case .idle: idle
            case .head: head
            case .body: body
            case .answering: nil
            }
        return limit.map { since + $0 }
    }

    mutating func bytesArrived(now: ContinuousClock.Instant) {
        change(now) { if !$0.requestOpen { $0.headStarted = true } }
    }

    mutating func headRead(now: ContinuousClock.Instant) {
        change(now) {
            $0.requestOpen = true
            $0.headStarted = false
            $0.headsRead += 1
        }
    }

    mutating func endRead(now: ContinuousClock.Instant) {
        change(now) { $0.requestOpen = false }
    }

    mutating func responseStarted() {
        responsesStarted += 1
    }

    mutating func responseEnded(now: ContinuousClock.Instant) {
        change(now) { $0.responsesEnded = min($0.responsesEnded + 1, $0.headsRead) }
    }

    /// The decision when the timer fires at `now`: nil when the deadline moved on meanwhile.
    mutating func expire(now: ContinuousClock.Instant) -> Expiry? {
        guard let deadline, now >= deadline else { return nil }
        switch wait {
        case .idle, .answering:
            return .close
        case .head:
            return .refuseHead
        case .body:
            // Answered already (e.g. a 401 sent before the body was read): nothing more is owed.
            guard responsesStarted < headsRead else { return .close }
            change(now) {
                $0.requestOpen = false
                $0.closeAfterResponse = true
            }
            return .refuseBody
        }
    }

    /// Runs `body`; a wait that changes starts counting from `now`.
    private mutating func change(_ now: ContinuousClock.Instant, _ body: (inout Self) -> Void) {
        let before = wait
        body(&self)
        if wait != before { since = now }
    }
}
