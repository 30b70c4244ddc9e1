import ActivityModel
import Testing

@testable import APNsProxy

@Suite("What the proxy records of an exchange")
struct ProxiedExchangeTests {
    static func gone(_ answer: String) -> ProxiedExchange {
        ProxiedExchange(
            app: "com.example", at: Instant(milliseconds: 1_700_000_000_000), token: "abcdef01",
            headers: [("apns-push-type", "liveactivity"), ("apns-id", "ID-1")],
            body: Array(#"{"aps":{"event":"update","timestamp":1700000000,"content-state":{"eta":1}}}"#.utf8),
            status: 410, apnsID: "ID-1", answerBody: Array(answer.utf8))
    }

    /// The 410 timestamp the proxy hands `Ledger.ingestAPNs` (which records Unix milliseconds as they are).
    static func recorded(_ exchange: ProxiedExchange) throws -> Instant? {
        guard case .number(let milliseconds)? = try exchange.document(token: "abcdef01")["response"]?["timestamp"]
        else { return nil }
        return Instant(unixMilliseconds: milliseconds)
    }

    @Test(
        "a 410 timestamp in Unix milliseconds, with a fraction, or in RFC 3339 is recorded as that instant",
        arguments: [
            (#"1763672400250"#, 1_763_672_400_250), (#"1763672400250.9"#, 1_763_672_400_250),
            (#"1.76367240025e12"#, 1_763_672_400_250), (#""2025-11-20T21:00:00.250Z""#, 1_763_672_400_250),
            (#""2025-11-20T22:00:00.250+01:00""#, 1_763_672_400_250),
        ])
    func usableTimestamps(timestamp: String, milliseconds: Int64) throws {
        let exchange = Self.gone(#"{"reason":"Unregistered","timestamp":\#(timestamp)}"#)
        #expect(try Self.recorded(exchange) == Instant(milliseconds: milliseconds))
        #expect(try exchange.document(token: "abcdef01")["response"]?["timestamp"] == .int(milliseconds))
        #expect(!exchange.unusableTimestamp)
    }

    @Test(
        "a 410 timestamp that is no time the ledger holds is left out, and flagged to be counted and logged",
        arguments: [
            #"1e300"#, #"-1e20"#, #"253402300800000"#, #""yesterday""#, #"true"#, #"{"ms":1}"#, #""1763672400250""#,
        ])
    func unusableTimestamps(timestamp: String) throws {
        let exchange = Self.gone(#"{"reason":"Unregistered","timestamp":\#(timestamp)}"#)
        #expect(try Self.recorded(exchange) == nil)
        #expect(try exchange.document(token: "abcdef01")["response"]?["timestamp"] == nil)
        #expect(exchange.unusableTimestamp)
    }

    @Test("an answer without a timestamp is not flagged")
    func noTimestamp() {
        #expect(!Self.gone(#"{"reason":"BadDeviceToken"}"#).unusableTimestamp)
        #expect(!Self.gone("").unusableTimestamp)
    }
}
