import ActivityModel

/// One line of the nightly truth feed (SPEC §5): what the app server believes about an activity.
///
/// `{"activity": "RIDE-8812", "state": {…}, "done": false, "at": "2026-11-20T21:14:00Z"}` — `activity` is
/// required; `state` (any JSON, the content-state the activity should show) is optional, and null means
/// "no opinion"; `done` defaults to false; `at` (RFC 3339 or Unix seconds) is optional and, when the feed repeats
/// an activity, the item with the latest `at` wins (ties: the later line).
public struct TruthItem: Hashable, Sendable {
    public var activity: String
    public var state: JSONValue?
    public var done: Bool
    public var at: Instant?
    /// 1-based line in the feed.
    public var line: Int

    public init(activity: String, state: JSONValue?, done: Bool, at: Instant?, line: Int) {
        self.activity = activity
        self.state = state
        self.done = done
        self.at = at
        self.line = line
    }

    /// Parses one line. - Throws: `LedgerError.badInput` with the line number and the field at fault.
    public init(line bytes: some Collection<UInt8>, number: Int) throws {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw LedgerError(.badInput, "not JSON: \(error)", line: number)
        }
        guard value.objectValue != nil else {
            throw LedgerError(.badInput, "expected an object, got \(value.kindName)", line: number)
        }
        guard let activity = value["activity"]?.stringValue, !activity.isEmpty else {
            throw LedgerError(.badInput, "field activity: expected a non-empty string", line: number, field: "activity")
        }
        if let scalar = Identifier.firstControlCharacter(activity) {
            throw LedgerError(
                .badInput, "field activity: control character \(Identifier.describe(scalar)) is not allowed",
                line: number, field: "activity")
        }
        var done = false
        if let flag = value["done"], !flag.isNull {
            guard let bool = flag.boolValue else {
                throw LedgerError(.badInput, "field done: expected true or false", line: number, field: "done")
            }
            done = bool
        }
        var at: Instant?
        if let time = value["at"], !time.isNull {
            guard let instant = SnapshotField.instant(time) else {
                throw LedgerError(
                    .badInput, "field at: expected an RFC 3339 time or Unix seconds", line: number, field: "at")
            }
            at = instant
        }
        // `.none`, not `nil`: JSONValue is itself nil-literal expressible, and a bare `nil` here was JSON null, so
        // `"state": null` (no opinion) was judged as the state `null` (a drift "fixed" by an update to null).
        let state = value["state"].flatMap { $0.isNull ? Optional<JSONValue>.none : $0 }
        self.init(activity: activity, state: state, done: done, at: at, line: number)
    }
}

/// A truth line that did not parse, as the report lists it.
public struct InvalidTruthLine: Hashable, Sendable {
    public var line: Int
    public var reason: String

    public var json: JSONValue { .object(["line": .int(Int64(line)), "reason": .string(reason)]) }
}
