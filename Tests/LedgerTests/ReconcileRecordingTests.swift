import ActivityModel
import Testing

@testable import Ledger

/// What a nightly run records beside its findings' evaluation: event ids a re-run must find again, and the report.
@Suite("Nightly recording: stable event ids, the report's stored text")
struct ReconcileRecordingTests {
    /// A build that derived the ids another way would record a run's findings a second time. The values were
    /// computed outside Swift (Python's hashlib and integers, the rule in `ReconcileIDs.nightlyID`).
    @Test(
        "a run's ids are its SHA-256 prefix, the activity's first bytes and its SHA-256, as a version-8 UUID",
        arguments: [
            ("bench", "A0000001", "1b32c28c-4130-8303-8220-5315e44a60c7"),
            ("app/run-7", "RIDE-ü", "a071cace-5249-8444-9693-8857f352b371"),
            ("bench", "A", "1b32c28c-4100-8000-8395-faa705c7d7c4"),
        ])
    func pinnedIDs(run: String, activity: String, id: String) {
        #expect(ReconcileIDs.nightlyID(run: run, activity: activity) == id)
        let ids = ReconcileIDs.NightlyIDs(run: run)
        #expect(ids.id(activity: activity + "x") != id)
        // Each id starts from the run's own hash state, whatever was hashed from it before.
        #expect(ids.id(activity: activity) == id)
        #expect(ids.id(activity: activity) == id)
    }

    /// A run records its findings in the activities' order, so its ids must grow with it to land at the end of
    /// the run's range of the id index rather than anywhere in it.
    @Test("a run's ids sort as its activities do whenever their first four bytes differ")
    func idsFollowActivities() {
        let ids = ReconcileIDs.NightlyIDs(run: "night-7")
        let activities = [
            "0", "00", "0a", "A0000006", "A0010006", "A1", "RIDE-1", "S", "ab", "zz", "zzzz", "é", "ü", "😀",
        ]
        #expect(activities == activities.sorted { NightlyScan.precedes($0, $1) })
        let made = activities.map { ids.id(activity: $0) }
        #expect(made == made.sorted(), "\(made)")
        // Beyond the first four bytes, the activity's hash tells them apart; another run's ids sort elsewhere.
        #expect(ids.id(activity: "A0000001") != ids.id(activity: "A0000002"))
        #expect(ReconcileIDs.NightlyIDs(run: "night-8").id(activity: "A0000006").prefix(8) != made[3].prefix(8))
    }

    /// The report is written before the last findings are recorded and its count patched in, its entries in parts as
    /// they were found: the stored text must be the report's JSON with the final count, whatever the count's width
    /// and wherever the parts split the entries (an empty part included).
    @Test(
        "the report written ahead in parts, with its count patched in, is the report's JSON",
        arguments: [0, 7, 60_000], [[], [0], [1], [2], [0, 1, 1, 2, 3]])
    func pendingText(recorded: Int, cuts: [Int]) throws {
        let entries = [
            NightlyEntry(finding: .drift, action: .init(activity: "A-1", action: .update, reason: "differs")),
            NightlyEntry(finding: .missing, action: .init(activity: "Ω", action: .none, reason: "not here")),
            NightlyEntry(finding: .drift, action: .init(activity: "B\u{1}", action: .update, reason: "\"x\"")),
        ]
        var report = NightlyReport(
            run: "night-\"1\"", at: Instant(milliseconds: 1_700_000_000_000), status: .recorded, strict: false,
            summary: [.drift: 2, .missing: 1], entries: entries,
            invalidLines: [InvalidTruthLine(line: 3, reason: "not JSON")], invalidLineCount: 1, truthLines: 4,
            truthItems: 3, activitiesScanned: 2, activitiesFolded: 1, recordedEvents: 12_345)
        var parts: [[UInt8]] = []
        for (start, end) in zip([0] + cuts, cuts + [entries.count]) {
            parts.append(NightlyReport.entriesText(entries[start..<end]))
        }
        let pending = ReconcileRuns.PendingText(report, entries: parts)
        report.recordedEvents = recorded
        let text = pending.text(recordedEvents: recorded)
        #expect(text == report.json.compactBytes)
        #expect(try JSONParser.parse(text)["recordedEvents"] == .int(Int64(recorded)))
    }

    /// A stored finding's `"payload": null` is no payload (not the JSON value null, which `JSONValue`'s nil literal
    /// would give: the trap of session 23's null-state bug).
    @Test("a stored finding's null payload reads as none")
    func nullPayload() throws {
        let json = try JSONParser.parse(#"{"activity":"A","action":"none","reason":"r","payload":null,"finding":"drift"}"#)
        let entry = try #require(NightlyEntry(json: json))
        #expect(entry.action.payload == Optional<JSONValue>.none)
    }
}
