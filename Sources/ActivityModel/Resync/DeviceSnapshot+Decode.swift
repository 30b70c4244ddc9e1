import Formats

extension DeviceSnapshot {
    /// Decodes a snapshot file/body with the same precise refusals as events (field path and expectation),
    /// e.g. `activities[2].activityState`. The one snapshot parser: the CLI's `reconcile resync` and
    /// `POST /v1/resync` both read through it (Ledger's `DeviceSnapshot(json:)`).
    public static func decode(_ bytes: [UInt8]) throws(EventDecodingError) -> DeviceSnapshot {
        try decode(try EventCodec.parse(bytes))
    }

    public static func decode(_ value: JSONValue) throws(EventDecodingError) -> DeviceSnapshot {
        let root = try FieldReader(value, path: "")
        if let problem = value.firstInterchangeProblem() { throw EventDecodingError(problem) }
        let installation = try root.nfcName("installation")
        let at = try root.instant("at")
        let list = try root.required("activities", expected: "an array")
        guard case .array(let elements) = list else { throw root.wrong("activities", "an array", list) }
        var entries: [Entry] = []
        var listed: [String: Int] = [:]
        for (index, element) in elements.enumerated() {
            let entry = try FieldReader(element, path: "activities[\(index)]")
            let activity = try entry.nfcName("activity")
            // A device lists each of its activities once; a second entry would be a second, contradicting look.
            if let first = listed.updateValue(index, forKey: activity) {
                throw EventDecodingError(
                    code: .wrongType, field: entry.fieldPath("activity"), expected: "each activity listed once",
                    found: "\"\(activity)\" again (first at activities[\(first)])")
            }
            let pushToken = try entry.optionalString("pushToken")
            if let pushToken, pushToken.isEmpty || !Hex.isDigits(pushToken.utf8) {
                throw EventDecodingError(
                    code: .wrongType, field: entry.fieldPath("pushToken"), expected: "a push token of hex digits",
                    found: JSONString.quoted(pushToken))
            }
            entries.append(
                Entry(
                    activity: activity,
                    // Optional in files (the CLI always took a snapshot without it); the HTTP schema requires it.
                    attributesType: try entry.optionalString("attributesType") ?? "",
                    activityState: try entry.requiredEnum("activityState", Phase.self),
                    contentTimestamp: try entry.optionalInt(
                        "contentTimestamp", expected: "an integer number of Unix seconds"),
                    contentHash: try entry.optionalString("contentHash"),
                    pushToken: pushToken))
        }
        return DeviceSnapshot(installation: installation, at: at, activities: entries)
    }
}
