import ActivityModel
import Crypto
import Formats

/// Deterministic event ids for what reconciliation records, so re-running the same run (or re-sending the same
/// snapshot) appends the same ids again, which the log treats as no-ops.
enum ReconcileIDs {
    /// A UUID-shaped id derived from run, activity and kind (`DerivedID`).
    static func id(run: String, activity: String, kind: String) -> String {
        DerivedID.uuid(run + "\u{0}" + activity + "\u{0}" + kind)
    }

    /// The id of a nightly run's `reconcile` event on `activity`: a version-8 UUID whose 122 free bits are, in
    /// order, 32 of the run's (SHA-256 of `run`), the activity's first 4 UTF-8 bytes (zero-padded) and 58 of the
    /// activity's (SHA-256 of `run`, NUL, `activity`) — `CanonicalUUID.make(version:orderedBits:)`.
    ///
    /// A run records tens of thousands of events at once. With ids spread over the whole id index (as `id`'s
    /// are), each one dirtied a page of its own in an index of millions: recording 60,000 findings over a million
    /// activities wrote ~1.5 GB (BENCHMARKS.md, "nightly"). Sharing the run's prefix keeps a run's ids in one narrow
    /// range of the index; the activity's first bytes next keep them in the order the run records them (activity
    /// order), so each append adds at the end of that range instead of all over it (BENCHMARKS.md, session 42).
    /// Two activities of one run share an id only if they share their first 4 bytes and 58 bits of SHA-256.
    /// Builds before session 42 used the activity's hash alone after 64 bits of the run's, and earlier ones
    /// `id(run:activity:kind: "reconcile")`: a run cut short by a crash under one of them and finished by this one
    /// records its first part's findings a second time.
    static func nightlyID(run: String, activity: String) -> String {
        NightlyIDs(run: run).id(activity: activity)
    }

    /// `nightlyID` for many activities of one run: the run's prefix is hashed once.
    struct NightlyIDs {
        /// SHA-256 fed `run` and NUL: each id copies it and feeds the activity.
        private let runAndNUL: SHA256
        /// The first 32 bits of SHA-256 of `run`.
        private let runBits: UInt64

        init(run: String) {
            let run = Array(run.utf8)
            runBits = Self.bigEndian(SHA256.hash(data: run).prefix(4))
            var hasher = SHA256()
            hasher.update(data: run)
            hasher.update(data: [0])
            runAndNUL = hasher
        }

        func id(activity: String) -> String {
            // SHA-256 of `run`, NUL, `activity`, fed in parts (the same digest as of the joined bytes).
            var hasher = runAndNUL
            var activity = activity
            let first = activity.withUTF8 { name in
                hasher.update(bufferPointer: UnsafeRawBufferPointer(name))
                return Self.bigEndian((0..<4).map { $0 < name.count ? name[$0] : 0 })
            }
            let hash = Self.bigEndian(hasher.finalize().prefix(8)) >> 6
            return CanonicalUUID.make(version: 8, orderedBits: [(runBits, 32), (first, 32), (hash, 58)])
        }

        private static func bigEndian(_ bytes: some Sequence<UInt8>) -> UInt64 {
            bytes.reduce(0) { $0 << 8 | UInt64($1) }
        }
    }

    /// The run id of a foreground resync: `resync:<installation>:<at>` (SPEC §2 `reconcile.run`).
    static func resyncRun(_ snapshot: DeviceSnapshot) -> String {
        "resync:\(snapshot.installation):\(snapshot.at.rfc3339)"
    }
}

/// Canonical content-state comparison for the nightly job: two states are equal when their canonical compact
/// JSON is byte-equal — object keys sorted by UTF-8 bytes (recursively), no whitespace, numbers by value
/// (`1`, `1.0` and `1e0` are equal), strings after unescaping. Array order matters.
enum CanonicalJSON {
    static func canonical(_ value: JSONValue) -> JSONValue {
        switch value {
        case .null, .bool, .string: return value
        case .number(let number): return canonical(number)
        case .array(let items): return .array(items.map(canonical))
        case .object(let object):
            return .object(JSONObject(members(object).map { .init(key: $0.key, value: canonical($0.value)) }))
        }
    }

    /// `canonical(value).compactBytes`, written straight from `value` (no canonical tree is built: the nightly job
    /// takes this for every state of its truth feed).
    static func bytes(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        append(value, to: &out)
        return out
    }

    /// Consumes the value at `scanner`'s index when its text is already its canonical form, byte for byte (so
    /// `bytes` of its parse would write it again unchanged); gives up (`UnusualPayload`, the caller parses) on any
    /// text that might not be: whitespace, a non-ASCII or escaped key, keys not strictly ascending by bytes (which
    /// also rules out repeats), an escaped string, a number other than up to 17 plain digits (`-0` included).
    /// A truth feed's states are mostly such text (`{"eta":4}`), so the nightly job hashes them as read.
    /// `TruthFastPathTests` holds it to `bytes` over generated states.
    static func consumeCanonical(_ scanner: inout PayloadScanner, depth: Int = 1) throws(UnusualPayload) {
        guard depth <= PayloadScanner.maximumDepth, let byte = scanner.current else { throw UnusualPayload() }
        switch byte {
        case UInt8(ascii: "{"):
            scanner.index += 1
            if scanner.current == UInt8(ascii: "}") {
                scanner.index += 1
                return
            }
            var previous: Range<Int>?
            repeat {
                guard scanner.current == UInt8(ascii: "\"") else { throw UnusualPayload() }
                let key = try scanner.stringRange(allowEscapes: false)
                let bytes = scanner.bytes
                guard bytes[key].allSatisfy({ $0 < 0x80 }) else { throw UnusualPayload() }
                if let previous, !bytes[previous].lexicographicallyPrecedes(bytes[key]) { throw UnusualPayload() }
                previous = key
                try scanner.expect(UInt8(ascii: ":"))
                try consumeCanonical(&scanner, depth: depth + 1)
            } while try separator(&scanner, closing: UInt8(ascii: "}"))
        case UInt8(ascii: "["):
            scanner.index += 1
            if scanner.current == UInt8(ascii: "]") {
                scanner.index += 1
                return
            }
            repeat {
                try consumeCanonical(&scanner, depth: depth + 1)
            } while try separator(&scanner, closing: UInt8(ascii: "]"))
        case UInt8(ascii: "\""):
            _ = try scanner.stringRange(allowEscapes: false)
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            _ = try scanner.skipValue(depth: depth)
        default:
            // `-0` is the one plain integer whose canonical text (`0`) differs from it.
            let negative = byte == UInt8(ascii: "-")
            guard let value = scanner.plainInteger(), value != 0 || !negative else { throw UnusualPayload() }
        }
    }

    /// After a member or item: true at `,` (consumed), false at `closing` (consumed); nothing else (no whitespace).
    private static func separator(_ scanner: inout PayloadScanner, closing: UInt8) throws(UnusualPayload) -> Bool {
        guard let byte = scanner.current else { throw UnusualPayload() }
        scanner.index += 1
        if byte == UInt8(ascii: ",") { return true }
        guard byte == closing else { throw UnusualPayload() }
        return false
    }

    private static func append(_ value: JSONValue, to out: inout [UInt8]) {
        switch value {
        case .null, .bool: out += value.compactBytes
        case .string(let string): JSONString.append(string.utf8, to: &out)
        case .number(let number): out += canonicalText(number).utf8
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                append(item, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (index, member) in members(object).enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONString.append(member.key.utf8, to: &out)
                out.append(UInt8(ascii: ":"))
                append(member.value, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Numbers by value: `1`, `1.0` and `1e0` are one number.
    private static func canonical(_ number: JSONNumber) -> JSONValue {
        .number(JSONNumber(literal: canonicalText(number)))
    }

    /// The literal of a number's canonical form: an integer's decimal digits, else the double's (`JSONNumber`).
    private static func canonicalText(_ number: JSONNumber) -> String {
        if let int = number.int64Value { return JSONNumber(int).text }
        return JSONNumber(number.doubleValue).text
    }

    /// The members that count, in canonical order: a repeated key keeps its last value, as JSON decoders do (keys
    /// equal as Swift strings are one key), and keys are sorted by UTF-8 bytes. Values are as given.
    private static func members(_ object: JSONObject) -> [JSONObject.Member] {
        // One member is its own canonical order (a truth feed's states are often `{"eta": 4}`).
        if object.members.count <= 1 { return object.members }
        var members: [JSONObject.Member] = []
        members.reserveCapacity(object.members.count)
        // A few keys are looked up in what is kept; more go through a set.
        let few = object.members.count <= 8
        var seen: Set<String> = []
        for member in object.members.reversed() {
            let repeated = few ? members.contains { $0.key == member.key } : !seen.insert(member.key).inserted
            if !repeated { members.append(member) }
        }
        // By UTF-8 bytes, compared in place (copying both keys to arrays at each comparison was two mallocs).
        members.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        return members
    }
}
