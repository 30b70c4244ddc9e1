@testable import LedgerServer
import Testing

@Suite("Read timeout decisions")
struct ConnectionTimeoutStateTests {
    let start = ContinuousClock.now

    func state() -> ConnectionTimeoutState {
        ConnectionTimeoutState(idle: .seconds(60), head: .seconds(10), body: .seconds(30), now: start)
    }

    @Test("a new connection waits idle; its first byte starts the head clock; the head starts the body clock")
    func waits() {
        var state = state()
        #expect(state.wait == .idle)
        #expect(state.deadline == start + .seconds(60))
        state.bytesArrived(now: start + .seconds(5))
        #expect(state.wait == .head)
        #expect(state.deadline == start + .seconds(15))
        state.bytesArrived(now: start + .seconds(9))  // more of the same head: the clock is not reset
        #expect(state.deadline == start + .seconds(15))
        state.headRead(now: start + .seconds(12))
        #expect(state.wait == .body)
        #expect(state.deadline == start + .seconds(42))
        state.endRead(now: start + .seconds(13))
        #expect(state.wait == .answering)
        #expect(state.deadline == nil)
        state.responseStarted()
        state.responseEnded(now: start + .seconds(100))
        #expect(state.wait == .idle)
        #expect(state.deadline == start + .seconds(160))
    }

    @Test("expiry: idle closes, a slow head is refused, a slow body is failed once and closes after its answer")
    func expiry() {
        var idle = state()
        #expect(idle.expire(now: start + .seconds(59)) == nil)
        #expect(idle.expire(now: start + .seconds(60)) == .close)

        var head = state()
        head.bytesArrived(now: start)
        #expect(head.expire(now: start + .seconds(10)) == .refuseHead)

        var body = state()
        body.headRead(now: start)
        #expect(body.expire(now: start + .seconds(30)) == .refuseBody)
        #expect(body.closeAfterResponse)
        #expect(body.wait == .answering)
        #expect(body.expire(now: start + .seconds(300)) == nil)
    }

    @Test("a body still arriving after its response was sent (a 401 before reading it) is simply closed")
    func answeredEarly() {
        var state = state()
        state.headRead(now: start)
        state.responseStarted()
        state.responseEnded(now: start + .seconds(1))
        #expect(state.wait == .body)
        #expect(state.expire(now: start + .seconds(30)) == .close)
    }

    @Test("zero turns a timeout off")
    func off() {
        var state = ConnectionTimeoutState(idle: .zero, head: .zero, body: .zero, now: start)
        #expect(state.deadline == nil)
        state.headRead(now: start)
        #expect(state.deadline == nil)
    }
}
