import ActivityModel
import Foundation
import Ledger
import LedgerStore
import LedgerTesting
import Testing

@Suite("Reconcile: nightly over a generated ledger")
struct ReconcileGeneratedTests {
    typealias F = ReconcileFixtures

    /// A ledger of `count` rides where every 10th-ish activity has one planted problem, the rest are healthy
    /// (accepted and applied updates, truth equal to the intended content, some ended normally).
    struct Plant {
        var events: [String] = []
        var truth: [String] = []
        var expected: [String: NightlyFinding] = [:]

        init(count: Int, seed: UInt64) {
            var random = seed
            func next(_ bound: Int) -> Int {
                random = random &* 6364136223846793005 &+ 1442695040888963407
                return Int((random >> 33) % UInt64(bound))
            }
            for index in 0..<count {
                let id = String(format: "A%05d", index)
                let eta = next(30)
                let kind = index % 10
                let start: Int64 = kind == 4 ? -420 : 0
                events.append(F.request(id, at: start, state: #"{"eta":\#(eta)}"#))
                events.append(F.token(id, at: start + 1, token: String(format: "%08x", index)))
                let updated = #"{"eta":\#(eta + 1)}"#
                let updateID = String(format: "30000000-0000-4000-8000-%012d", index)
                events.append(F.update(id, at: 10, state: updated, eventID: updateID))
                switch kind {
                case 1:
                    events.append(F.push(id, at: 11, refersTo: updateID, status: 200, token: String(format: "%08x", index)))
                    truth.append(F.truth(id, state: updated, done: true))
                    expected[id] = .leaked
                case 2:
                    truth.append(F.truth(id, state: #"{"eta":\#(eta + 7)}"#))
                    expected[id] = .drift
                case 3:
                    events.append(F.push(id, at: 11, refersTo: updateID, status: 410, reason: "Unregistered", token: String(format: "%08x", index)))
                    truth.append(F.truth(id, state: updated))
                    expected[id] = .deadToken
                case 4:
                    truth.append(F.truth(id, state: updated))
                    expected[id] = .expired
                case 5:
                    events.append(F.push(id, at: 11, refersTo: updateID, status: 400, reason: "PayloadEmpty", token: String(format: "%08x", index)))
                    truth.append(F.truth(id, state: updated))
                    expected[id] = .undelivered
                case 6:
                    truth.append(F.truth(id, state: updated))
                    truth.append(F.truth("M" + id, state: updated))
                    expected["M" + id] = .missing
                case 7:
                    // Ended on record: the truth may differ, nothing is reported.
                    events.append(F.end(id, at: 20))
                    truth.append(F.truth(id, state: #"{"eta":99}"#, done: true))
                default:
                    events.append(F.push(id, at: 11, refersTo: updateID, status: 200, token: String(format: "%08x", index)))
                    if next(2) == 0 { truth.append(F.truth(id, state: updated)) }
                }
            }
            // The feed arrives in no particular order.
            for index in truth.indices.reversed() {
                let other = next(index + 1)
                truth.swapAt(index, other)
            }
        }
    }

    @Test("exactly the planted findings are reported, across several projection pages")
    func plantedFindings() async throws {
        let temp = try TemporaryLedger()
        let plant = Plant(count: 2500, seed: 42)
        try await temp.append(plant.events.joined(separator: "\n"))
        let report = try await temp.ledger.nightly(
            truth: try F.reader(plant.truth.joined(separator: "\n"), in: temp), runID: "generated",
            at: F.instant(120))
        var found: [String: NightlyFinding] = [:]
        for entry in report.entries { found[entry.activity] = entry.finding }
        #expect(found == plant.expected)
        #expect(report.entries.count == plant.expected.count)
        for finding in NightlyFinding.allCases {
            #expect(report.summary[finding] == plant.expected.values.filter { $0 == finding }.count)
        }
        #expect(report.activitiesScanned == 2500)
        #expect(report.invalidLineCount == 0)
    }
}
