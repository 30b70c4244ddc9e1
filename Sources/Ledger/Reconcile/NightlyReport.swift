import ActivityModel

/// The result of a nightly run: SPEC §7 `nightly` `{"run","summary","actions"}` plus what a person needs to trust
/// it (time, counts, invalid truth lines and what was done with them, whether it was recorded now or before).
public struct NightlyReport: Hashable, Sendable {
    /// What happened to this run.
    public enum Status: String, Hashable, Sendable {
        /// Evaluated and recorded now.
        case recorded
        /// The run id was recorded before: nothing was evaluated or added; this is the recorded report.
        case alreadyRecorded
        /// `strict` and the truth feed had invalid lines: stopped before anything was recorded.
        case stopped
    }

    public var run: String
    public var at: Instant
    public var status: Status
    public var strict: Bool
    /// Activities per finding (every finding present, zeros included).
    public var summary: [NightlyFinding: Int]
    /// One per activity with a finding, in activity order (missing ones merged in the same order).
    public var entries: [NightlyEntry]
    /// The first invalid truth lines (at most 1000) and their total.
    public var invalidLines: [InvalidTruthLine]
    public var invalidLineCount: Int
    public var truthLines: Int
    public var truthItems: Int
    /// Ledger activities read from the projection, and how many of them were folded.
    public var activitiesScanned: Int
    public var activitiesFolded: Int
    /// `reconcile` events appended by this run (0 when already recorded or stopped).
    public var recordedEvents: Int

    public var alreadyRecorded: Bool { status == .alreadyRecorded }

    /// What happened to invalid truth lines: `skipped` (lenient), `stopped` (strict), or `none`.
    public var invalidLineHandling: String {
        invalidLineCount == 0 ? "none" : (strict ? "stopped" : "skipped")
    }

    public var summaryJSON: JSONValue {
        .object(JSONObject(NightlyFinding.allCases.map { .init(key: $0.rawValue, value: .int(Int64(summary[$0] ?? 0))) }))
    }

    public var json: JSONValue {
        .object([
            "run": .string(run), "at": .string(at.rfc3339), "status": .string(status.rawValue),
            "alreadyRecorded": .bool(alreadyRecorded), "stopped": .bool(status == .stopped), "strict": .bool(strict),
            "summary": summaryJSON, "actions": .array(entries.map(\.json)),
            "invalidLines": .array(invalidLines.map(\.json)), "invalidLineCount": .int(Int64(invalidLineCount)),
            "invalidLineHandling": .string(invalidLineHandling),
            "truthLines": .int(Int64(truthLines)), "truthItems": .int(Int64(truthItems)),
            "activitiesScanned": .int(Int64(activitiesScanned)), "activitiesFolded": .int(Int64(activitiesFolded)),
            "recordedEvents": .int(Int64(recordedEvents)),
        ])
    }

    /// `json.compactBytes`, with the entries written one at a time: the tree of every entry at once took ~1 KB per
    /// finding (a truth feed of a million activities the ledger does not have peaked at 1.5 GB).
    public var compactBytes: [UInt8] { compactBytes(entries: [Self.entriesText(entries)]) }

    /// The entries' objects joined by commas: a part of `actions` (`compactBytes(entries:)`).
    static func entriesText(_ entries: some Collection<NightlyEntry>) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entries.count * 320)
        for entry in entries {
            if !bytes.isEmpty { bytes.append(UInt8(ascii: ",")) }
            bytes += entry.json.compactBytes
        }
        return bytes
    }

    /// `compactBytes` with `actions` given as its parts, in order (`entriesText` of consecutive runs of `entries`):
    /// the nightly job writes each part as its findings come in, so the report's text is not written all at once
    /// after the last one (~0.17 s for 60,000 findings, BENCHMARKS.md session 43).
    func compactBytes(entries parts: [[UInt8]]) -> [UInt8] {
        var shell = self
        shell.entries = []
        let text = shell.json.compactBytes
        // `"actions":[]` first occurs as the member itself: the members before it are the run and the time (strings,
        // whose quotes are escaped), booleans and the summary's numbers.
        let marker = Array(#""actions":[]"#.utf8)
        guard let start = text.indices.first(where: { text[$0...].starts(with: marker) }) else {
            return json.compactBytes
        }
        let close = start + marker.count - 1
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count + parts.reduce(32) { $0 + $1.count + 1 })  // room for the final count
        bytes += text[..<close]
        var first = true
        for part in parts where !part.isEmpty {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            bytes += part
        }
        bytes += text[close...]
        return bytes
    }

    /// Reads a report stored by a previous run (the JSON above).
    init?(json: JSONValue) {
        guard let run = json["run"]?.stringValue, let at = json["at"]?.stringValue.flatMap(Instant.init(rfc3339:)),
            let status = json["status"]?.stringValue.flatMap(Status.init(rawValue:)),
            let entries = json["actions"]?.arrayValue?.compactMap(NightlyEntry.init(json:))
        else { return nil }
        func int(_ key: String) -> Int { Int(json[key]?.numberValue?.int64Value ?? 0) }
        var summary: [NightlyFinding: Int] = [:]
        for finding in NightlyFinding.allCases {
            summary[finding] = Int(json["summary"]?[finding.rawValue]?.numberValue?.int64Value ?? 0)
        }
        self.init(
            run: run, at: at, status: status, strict: json["strict"]?.boolValue ?? false, summary: summary,
            entries: entries,
            invalidLines: (json["invalidLines"]?.arrayValue ?? []).compactMap { line in
                guard let number = line["line"]?.numberValue?.int64Value else { return nil }
                return InvalidTruthLine(line: Int(number), reason: line["reason"]?.stringValue ?? "")
            },
            invalidLineCount: int("invalidLineCount"), truthLines: int("truthLines"), truthItems: int("truthItems"),
            activitiesScanned: int("activitiesScanned"), activitiesFolded: int("activitiesFolded"),
            recordedEvents: int("recordedEvents"))
    }

    init(
        run: String, at: Instant, status: Status, strict: Bool, summary: [NightlyFinding: Int], entries: [NightlyEntry],
        invalidLines: [InvalidTruthLine], invalidLineCount: Int, truthLines: Int, truthItems: Int,
        activitiesScanned: Int, activitiesFolded: Int, recordedEvents: Int
    ) {
        self.run = run
        self.at = at
        self.status = status
        self.strict = strict
        self.summary = summary
        self.entries = entries
        self.invalidLines = invalidLines
        self.invalidLineCount = invalidLineCount
        self.truthLines = truthLines
        self.truthItems = truthItems
        self.activitiesScanned = activitiesScanned
        self.activitiesFolded = activitiesFolded
        self.recordedEvents = recordedEvents
    }
}
