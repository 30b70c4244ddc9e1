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
        guard let object = value.objectValue else {
            throw LedgerError(.badInput, "expected an object, got \(value.kindName)", line: number)
        }
        for key in Self.knownKeys where object.members.lazy.filter({ $0.key == key }).count > 1 {
            throw LedgerError(.badInput, "field \(key): given twice (each key once, RFC 7493)", line: number, field: key)
        }
        guard let activity = value["activity"]?.stringValue, !activity.isEmpty else {
            throw LedgerError(.badInput, "field activity: expected a non-empty string", line: number, field: "activity")
        }
        // The longest name an event may give (`Identifier.maxBytes`): its finding is recorded as an event (found: a
        // 300,000-character id stopped the whole run with the size of that event instead of being one invalid line).
        if let problem = Identifier.problem(activity) {
            throw LedgerError(.badInput, "field activity: \(problem)", line: number, field: "activity")
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
        if let state { try Self.check(state: state, line: number) }
        self.init(activity: activity, state: state, done: done, at: at, line: number)
    }

    /// The keys a truth line gives meaning to: each at most once (a reader taking the first `done` and one taking
    /// the last would judge the activity differently).
    static let knownKeys = ["activity", "state", "done", "at"]

    /// A state is a content-state: an object, each key once, whose numbers the push it may become carries as
    /// given. Found: `{"x":1e999}` became `{"x":0}` in a drift's update payload (the comparison's canonical form,
    /// which holds numbers as doubles), and a state `"s"` or `[1,2]` became an update ActivityKit cannot decode.
    private static func check(state: JSONValue, line: Int) throws {
        guard state.objectValue != nil else {
            throw LedgerError(
                .badInput, "field state: expected an object (a content-state) or null, got \(state.kindName)", line: line,
                field: "state")
        }
        if let problem = state.firstInterchangeProblem(path: "state") {
            throw LedgerError(
                .badInput, "field \(problem.field): expected \(problem.expected), got \(problem.found)", line: line,
                field: problem.field)
        }
        if let (path, literal) = outOfRange(state, path: "state") {
            throw LedgerError(
                .badInput, "field \(path): the number \(literal) is out of range (a finite double or a 64-bit integer)",
                line: line, field: path)
        }
    }

    /// The first number of `value` that a double or a 64-bit integer cannot carry (what the canonical form and the
    /// payload built from it hold): it overflows, underflows to zero, or is an integer literal past 64 bits. Stricter
    /// than the interchange rule every door applies (`firstInterchangeProblem`: overflow only), since a truth state
    /// is compared and re-sent in canonical form.
    private static func outOfRange(_ value: JSONValue, path: String) -> (String, String)? {
        switch value {
        case .null, .bool, .string: return nil
        case .number(let number):
            let text = number.text
            guard let double = Double(text), double.isFinite else { return (path, text) }
            let mantissa = text.prefix { $0 != "e" && $0 != "E" }
            if double == 0, mantissa.contains(where: { ("1"..."9").contains($0) }) { return (path, text) }
            if !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), Int64(text) == nil { return (path, text) }
            return nil
        case .array(let items):
            for (index, item) in items.enumerated() {
                if let found = outOfRange(item, path: "\(path)[\(index)]") { return found }
            }
            return nil
        case .object(let object):
            for member in object.members {
                if let found = outOfRange(member.value, path: "\(path).\(member.key)") { return found }
            }
            return nil
        }
    }
}

extension TruthItem {
    /// What `init(line:number:)` makes of `bytes`, read without a tree, and the range of the state's text in
    /// `bytes` (nil: no state), which is its canonical form (`CanonicalJSON.consumeCanonical`); the item's own
    /// `state` is left nil. Nil when the line is not of the plain kind it reads (unescaped ASCII keys, each known
    /// key once, an unescaped activity, a state already canonical…): the caller parses that line in full, which
    /// also words its errors. `TruthFastPathTests` holds the two to the same answers.
    static func scanned(_ bytes: UnsafeBufferPointer<UInt8>, number: Int) -> (item: TruthItem, state: Range<Int>?)? {
        var scanner = PayloadScanner(bytes)
        do {
            return try scan(&scanner, number: number)
        } catch {
            return nil
        }
    }

    /// The keys `scan` knows, as bytes (compared with a key's bytes in place, not through `String.UTF8View`).
    private enum Keys {
        static let activity = Array("activity".utf8)
        static let state = Array("state".utf8)
        static let done = Array("done".utf8)
        static let at = Array("at".utf8)
    }

    private static func scan(_ scanner: inout PayloadScanner, number: Int) throws(UnusualPayload)
        -> (item: TruthItem, state: Range<Int>?)
    {
        guard try scanner.beginObject() else { throw UnusualPayload() }
        var activity: String?
        var state: Range<Int>?
        var done: Bool?
        var at: Instant??
        var sawState = false
        repeat {
            let key = try scanner.key()
            // Swift compares keys as strings: only ASCII keys are the same keys to it and to a byte comparison.
            guard key.allSatisfy({ $0 < 0x80 }) else { throw UnusualPayload() }
            if key.elementsEqual(Keys.activity) {
                guard activity == nil else { throw UnusualPayload() }
                activity = try scanner.string()
            } else if key.elementsEqual(Keys.state) {
                guard !sawState else { throw UnusualPayload() }
                sawState = true
                if try !scanner.null() {
                    // A state is an object; anything else is refused by the full parse.
                    guard scanner.current == UInt8(ascii: "{") else { throw UnusualPayload() }
                    let start = scanner.index
                    try CanonicalJSON.consumeCanonical(&scanner)
                    state = start..<scanner.index
                }
            } else if key.elementsEqual(Keys.done) {
                guard done == nil else { throw UnusualPayload() }
                switch scanner.current {
                case UInt8(ascii: "t")?: done = true
                case UInt8(ascii: "f")?: done = false
                case UInt8(ascii: "n")?: done = false
                default: throw UnusualPayload()
                }
                _ = try scanner.skipValue(depth: 2)
            } else if key.elementsEqual(Keys.at) {
                guard at == nil else { throw UnusualPayload() }
                if try scanner.null() {
                    at = .some(nil)
                } else if scanner.current == UInt8(ascii: "\"") {
                    guard let instant = SnapshotField.instant(.string(try scanner.string())) else {
                        throw UnusualPayload()
                    }
                    at = instant
                } else if let literal = try scanner.numberText() {
                    guard let instant = SnapshotField.instant(.number(JSONNumber(literal: literal))) else {
                        throw UnusualPayload()
                    }
                    at = instant
                } else {
                    throw UnusualPayload()
                }
            } else {
                _ = try scanner.skipValue(depth: 2)
            }
        } while try scanner.nextMember()
        scanner.skipWhitespace()
        guard scanner.atEnd, let activity, !activity.isEmpty, Identifier.problem(activity) == nil
        else {
            throw UnusualPayload()
        }
        return (TruthItem(activity: activity, state: nil, done: done ?? false, at: at ?? nil, line: number), state)
    }
}

/// A truth line that did not parse, as the report lists it.
public struct InvalidTruthLine: Hashable, Sendable {
    public var line: Int
    public var reason: String

    public var json: JSONValue { .object(["line": .int(Int64(line)), "reason": .string(reason)]) }
}
