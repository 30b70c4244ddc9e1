import ActivityModel
import Foundation
import Ledger
import LedgerStore
import LedgerTesting
import Testing

/// A second APNs exchange under one `apns-id` — a retry after 429, or another push reusing the id — was refused
/// as an id conflict (both events' ids derive from `apns-id`), so after 429 then 200 the audit still said
/// `rejected(TooManyRequests)`: SPEC §4 says one 200 makes it `accepted` whatever failed before it.
@Suite("APNs exchanges that share an apns-id")
struct APNsRetryTests {
    typealias F = ReconcileFixtures

    static func exchange(status: Int, at minutes: Int64, eta: Int = 3) throws -> JSONValue {
        let reason = status == 200 ? "" : #","reason":"TooManyRequests""#
        return try JSONParser.parse(#"""
            {"activity":"RIDE","at":"\#(F.time(minutes))","request":{"token":"abcd0123","headers":{"apns-push-type":"liveactivity","apns-id":"AAAAAAAA-2222-3333-4444-555555555555"},
             "payload":{"aps":{"event":"update","timestamp":\#(F.stamp(2) + Int64(eta)),"content-state":{"eta":\#(eta)}}}},
             "response":{"status":\#(status)\#(reason)}}
            """#)
    }

    @Test("429 then 200 under one apns-id: both are recorded, the update is accepted, and a replay adds nothing")
    func retry() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(F.lines(F.request("RIDE"), F.token("RIDE", at: 1, token: "abcd0123")))
        let first = try await temp.ledger.ingestAPNs(try Self.exchange(status: 429, at: 2), app: nil)
        #expect(first.count == 2)
        let second = try await temp.ledger.ingestAPNs(try Self.exchange(status: 200, at: 3), app: nil)
        #expect(second.count == 1, "only a push: it carried the update already recorded")
        #expect(second.allSatisfy { !$0.duplicate })
        let audit = try await temp.ledger.audit(activity: "RIDE")
        let update = try #require(audit.deliveries.first { $0.event == first[0].id })
        #expect(update.verdict == .accepted, "\(update)")
        let again = try await temp.ledger.ingestAPNs(try Self.exchange(status: 200, at: 3), app: nil)
        #expect(again.allSatisfy { $0.duplicate })
        #expect(try await temp.ledger.verify().ok)
    }

    @Test("another update reusing an apns-id is recorded as its own event")
    func otherContent() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(F.lines(F.request("RIDE"), F.token("RIDE", at: 1, token: "abcd0123")))
        let first = try await temp.ledger.ingestAPNs(try Self.exchange(status: 200, at: 2, eta: 3), app: nil)
        let other = try await temp.ledger.ingestAPNs(try Self.exchange(status: 200, at: 4, eta: 9), app: nil)
        #expect(other.count == 2)
        #expect(other[0].id != first[0].id)
        let audit = try await temp.ledger.audit(activity: "RIDE")
        #expect(Set(audit.deliveries.map(\.event)).isSuperset(of: [first[0].id, other[0].id]))
    }
}
