extension DeviceSnapshot {
    /// Decodes a snapshot file/body with the same precise refusals as events (field path and expectation),
    /// e.g. `activities[2].activityState`.
    public static func decode(_ bytes: [UInt8]) throws(EventDecodingError) -> DeviceSnapshot {
        try decode(try EventCodec.parse(bytes))
    }

    public static func decode(_ value: JSONValue) throws(EventDecodingError) -> DeviceSnapshot {
        let root = try FieldReader(value, path: "")
        if let repeated = value.firstRepeatedKey() {
            throw EventDecodingError(
                code: .wrongType, field: repeated, expected: "each key once in an object (RFC 7493)",
                found: "the key given twice")
        }
        let installation = try root.name("installation")
        let at = try root.instant("at")
        let list = try root.required("activities", expected: "an array")
        guard case .array(let elements) = list else { throw root.wrong("activities", "an array", list) }
        var entries: [Entry] = []
        for (index, element) in elements.enumerated() {
            let entry = try FieldReader(element, path: "activities[\(index)]")
            entries.append(
                Entry(
                    activity: try entry.name("activity"),
                    attributesType: try entry.string("attributesType"),
                    activityState: try entry.requiredEnum("activityState", Phase.self),
                    contentTimestamp: try entry.optionalInt(
                        "contentTimestamp", expected: "an integer number of Unix seconds"),
                    contentHash: try entry.optionalString("contentHash"),
                    pushToken: try entry.optionalString("pushToken")))
        }
        return DeviceSnapshot(installation: installation, at: at, activities: entries)
    }
}
