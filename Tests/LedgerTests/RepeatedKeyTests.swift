import ActivityModel
import Foundation
import Ledger
import LedgerTesting
import Testing

/// A key given twice in one object means one thing to the ledger's field reader (the first value) and another to
/// most clients (the last): the doors refuse it (RFC 7493), naming the key. And a truth state is a content-state
/// whose numbers a push can carry as given. Found: `"stream"` twice was stored under the first; `"done"` twice was
/// read as the first; `{"x":1e999}` in a truth state became `{"x":0}` in a drift's update.
@Suite("Doors: each key once, and truth states a push can carry")
struct RepeatedKeyTests {
    typealias F = ReconcileFixtures

    @Test(
        "an interchange event with a key given twice is refused naming it",
        arguments: [
            (#"{"stream":"activity:A","stream":"activity:B","type":"dismiss","at":1,"data":{"by":"user"}}"#, "stream"),
            (#"{"stream":"activity:A","type":"dismiss","at":1,"data":{"by":"user","by":"system"}}"#, "data.by"),
            (#"{"stream":"activity:A","type":"update","at":1,"data":{"content":{"state":{"eta":7,"eta":8}},"timestamp":1}}"#,
             "data.content.state.eta"),
        ])
    func eventKeys(line: String, field: String) throws {
        #expect(throws: EventDecodingError.self) { try EventCodec.decode(line) }
        do {
            _ = try EventCodec.decode(line)
        } catch {
            #expect(error.field == field)
        }
    }

    @Test("the same keys once each still decode, and a snapshot with a key twice is refused")
    func onceIsFine() throws {
        _ = try EventCodec.decode(#"{"stream":"activity:A","type":"dismiss","at":1,"data":{"by":"user"}}"#)
        let snapshot = #"{"installation":"I","installation":"J","at":1,"activities":[]}"#
        #expect(throws: EventDecodingError.self) { try DeviceSnapshot.decode(Array(snapshot.utf8)) }
    }

    @Test(
        "a truth line with a known key twice, a state that is not an object, or a number no push can carry is invalid",
        arguments: [
            (#"{"activity":"A","done":false,"done":true}"#, "done"),
            (#"{"activity":"A","state":"s"}"#, "state"),
            (#"{"activity":"A","state":[1,2]}"#, "state"),
            (#"{"activity":"A","state":{"x":1e999}}"#, "state.x"),
            (#"{"activity":"A","state":{"x":[12345678901234567890123]}}"#, "state.x[0]"),
            (#"{"activity":"A","state":{"x":1e-400}}"#, "state.x"),
            (#"{"activity":"A","state":{"x":1,"x":2}}"#, "state.x"),
        ])
    func truthLines(line: String, field: String) async throws {
        let temp = try TemporaryLedger()
        try await temp.append(F.request("A"))
        let report = try await temp.ledger.nightly(
            truth: try F.reader(line, in: temp), runID: "n", at: F.instant(120))
        #expect(report.invalidLines.map(\.line) == [1])
        #expect(report.invalidLines.first?.reason.contains("field \(field)") == true, "\(report.invalidLines)")
        #expect(report.entries.allSatisfy { $0.activity != "A" })
    }

    @Test("numbers a double or a 64-bit integer carries stay valid truth, and unknown keys may repeat")
    func fineTruth() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(F.request("A"))
        let line = #"{"activity":"A","note":1,"note":2,"state":{"a":1.5e300,"b":-0.0,"c":9223372036854775807,"d":1e-300}}"#
        let report = try await temp.ledger.nightly(truth: try F.reader(line, in: temp), runID: "n", at: F.instant(120))
        #expect(report.invalidLines.isEmpty, "\(report.invalidLines)")
        #expect(report.entries.map(\.activity) == ["A"])
    }
}
