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
            // Sorted by key bytes; of members sent with the same key the last one is kept, as JSON decoders do.
            let members = object.members
            var kept: [Int]
            if members.allSatisfy({ $0.key.utf8.allSatisfy { $0 < 0x80 } }) {
                // ASCII keys (the usual case) are the same string exactly when they are the same bytes, so the
                // sort by (bytes, order sent) puts repeats side by side, the last sent last. Compared in place:
                // copying both keys to arrays at each comparison was a malloc each.
                let order = members.indices.sorted { first, second in
                    let order = compareBytes(members[first].key, members[second].key)
                    return order == 0 ? first < second : order < 0
                }
                kept = []
                kept.reserveCapacity(order.count)
                for (rank, index) in order.enumerated()
                where rank + 1 == order.count || compareBytes(members[order[rank + 1]].key, members[index].key) != 0 {
                    kept.append(index)
                }
            } else {
                // Repeats as Swift compares strings (canonically equivalent keys are one key), the last sent kept.
                var seen: Set<String> = []
                kept = members.indices.reversed().filter { seen.insert(members[$0].key).inserted }
                kept.sort { compareBytes(members[$0].key, members[$1].key) < 0 }
            }
            let sorted = kept.map { JSONObject.Member(key: members[$0].key, value: canonical(members[$0].value)) }
            return .object(JSONObject(sorted))
        }
    }

    /// Negative, zero or positive as `first`'s UTF-8 bytes sort before, equal to or after `second`'s.
    static func compareBytes(_ first: String, _ second: String) -> Int {
        var left = first.utf8.makeIterator()
        var right = second.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case let (a?, b?) where a != b: return a < b ? -1 : 1
            default: continue
            }
        }
    }

    static func bytes(_ value: JSONValue) -> [UInt8] { canonical(value).compactBytes }
}
