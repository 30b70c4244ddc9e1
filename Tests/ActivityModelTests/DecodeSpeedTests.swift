import ActivityModel
import Foundation
import Testing

/// Prints decode throughput (run in release: `swift test -c release --filter DecodeSpeed`). Never asserts speed.
@Suite("Decode speed")
struct DecodeSpeedTests {
    @Test("storage payloads decode fast enough for rebuild (prints events/s)")
    func payloadDecodeSpeed() throws {
        let event = try EventCodec.decode(EventCodecTests.valid)
        let payload = EventCodec.encodePayload(event)
        let count = 100_000
        let start = ContinuousClock.now
        var checksum = 0
        for _ in 0..<count {
            let decoded = try EventCodec.decodePayload(
                payload, id: "u1", stream: "activity:RIDE-1", type: "update", at: event.at)
            checksum &+= decoded.id?.utf8.count ?? 0
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("decodePayload: \(Int(Double(count) / seconds)) events/s (\(payload.count) bytes each)")
        #expect(checksum == 2 * count)
    }

    @Test("the fold of a 100-event activity is cheap (prints the time per call)")
    func foldSpeed() throws {
        let events = FoldPropertyTests.history(seed: 3) + (0..<80).map { i in
            PositionedEvent(
                position: Int64(1000 + i),
                event: LedgerEvent(
                    id: "x\(i)", stream: .activity("A"), at: FoldPropertyTests.t0.adding(milliseconds: Int64(i) * 60_000),
                    data: .update(UpdateData(content: ActivityContent(state: ["i": .int(Int64(i))]), timestamp: FoldPropertyTests.t0.seconds + Int64(i)))))
        }
        let runs = 500
        let start = ContinuousClock.now
        for _ in 0..<runs {
            _ = try ActivityFold.state(activity: "A", events: events, asOf: FoldPropertyTests.t0.adding(hours: 3))
        }
        let elapsed = ContinuousClock.now - start
        print("fold of \(events.count) events: \(elapsed / runs) per call")
        #expect(runs > 0)
    }
}
