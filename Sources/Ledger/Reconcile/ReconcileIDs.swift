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

    /// The id of a nightly run's `reconcile` event on `activity`: a version-8 UUID whose first 8 bytes are the
    /// run's (SHA-256 of `run`) and last 8 the activity's (SHA-256 of `run`, NUL, `activity`).
    ///
    /// A run records tens of thousands of events at once. With ids spread over the whole id index (as `id`'s
    /// are), each one dirtied a page of its own in an index of millions: recording 60,000 findings over a million
    /// activities wrote ~1.5 GB (BENCHMARKS.md, "nightly"). Sharing the run's prefix keeps a run's ids in one narrow
    /// range of the index. Earlier builds used `id(run:activity:kind: "reconcile")`, so a run cut short by a crash
    /// under one of them and finished by this one records its first part's findings a second time.
    static func nightlyID(run: String, activity: String) -> String {
        let prefix = SHA256.hash(data: Array(run.utf8)).prefix(8)
        let suffix = SHA256.hash(data: Array((run + "\u{0}" + activity).utf8)).prefix(8)
        return CanonicalUUID.make(version: 8, from: Array(prefix) + Array(suffix))
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
        case .number(let number):
            if let int = number.int64Value { return .int(int) }
            return .double(number.doubleValue)
        case .array(let items): return .array(items.map(canonical))
        case .object(let object):
            var seen: Set<String> = []
            var members: [JSONObject.Member] = []
            // A repeated key keeps its last value, as JSON decoders do.
            for member in object.members.reversed() where seen.insert(member.key).inserted {
                members.append(.init(key: member.key, value: canonical(member.value)))
            }
            // By UTF-8 bytes, compared in place (copying both keys to arrays at each comparison was two mallocs).
            members.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            return .object(JSONObject(members))
        }
    }

    static func bytes(_ value: JSONValue) -> [UInt8] { canonical(value).compactBytes }
}
