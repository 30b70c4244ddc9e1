import ActivityModel

/// Deterministic event ids for what reconciliation records, so re-running the same run (or re-sending the same
/// snapshot) appends the same ids again, which the log treats as no-ops.
enum ReconcileIDs {
    /// A UUID-shaped id derived from run, activity and kind (`DerivedID`).
    static func id(run: String, activity: String, kind: String) -> String {
        DerivedID.uuid(run + "\u{0}" + activity + "\u{0}" + kind)
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
            members.sort { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
            return .object(JSONObject(members))
        }
    }

    static func bytes(_ value: JSONValue) -> [UInt8] { canonical(value).compactBytes }
}
