import ActivityModel
import Foundation
import Ledger
import LedgerTesting
import Testing

/// Reconciliation's own inputs — a snapshot's installation and activities, a nightly run id — are names like every
/// other: a control character is refused naming the field, and nothing is written.
@Suite("Reconciliation refuses control characters in its names")
struct ReconcileNamesTests {
    @Test("a snapshot's installation or activity with a control character is refused naming the field")
    func snapshotNames() throws {
        let installation = #expect(throws: LedgerError.self) {
            try DeviceSnapshot(json: Array(#"{"installation":"I\u0000","at":1,"activities":[]}"#.utf8))
        }
        #expect(installation?.field == "installation")
        let activity = #expect(throws: LedgerError.self) {
            try DeviceSnapshot(json: Array(
                #"{"installation":"I","at":1,"activities":[{"activity":"A\u001f","activityState":"active"}]}"#.utf8))
        }
        #expect(activity?.field == "activities[0].activity")
    }

    @Test("a nightly run id with a control character is refused naming run, and nothing is written")
    func runID() async throws {
        let temp = try TemporaryLedger()
        let error = await #expect(throws: LedgerError.self) {
            try await temp.ledger.nightly(
                truthBytes: Array(#"{"activity":"X","done":true}"#.utf8), runID: "night\u{0}1",
                at: Instant(milliseconds: 0))
        }
        #expect(error?.field == "run")
        #expect(try await temp.ledger.lastPosition() == 0)
    }
}
