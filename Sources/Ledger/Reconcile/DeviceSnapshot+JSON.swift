import ActivityModel

extension DeviceSnapshot {
    /// Parses the SPEC §5 snapshot `{installation, at, activities: [{activity, attributesType, activityState,
    /// contentTimestamp, contentHash, pushToken}]}`; `at` is RFC 3339 or Unix seconds.
    /// - Throws: `LedgerError.badInput` naming the field (`activities[2].activityState`).
    public init(json bytes: some Collection<UInt8>) throws {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw LedgerError(.badInput, "snapshot is not JSON: \(error)")
        }
        try self.init(json: value)
    }

    public init(json value: JSONValue) throws {
        guard value.objectValue != nil else { throw LedgerError(.badInput, "snapshot: expected an object") }
        let installation = try SnapshotField.string(value, "installation", path: "installation")
        guard let at = SnapshotField.instant(value["at"]) else {
            throw LedgerError(.badInput, "snapshot field at: expected an RFC 3339 time or Unix seconds", field: "at")
        }
        guard let items = value["activities"]?.arrayValue else {
            throw LedgerError(.badInput, "snapshot field activities: expected an array", field: "activities")
        }
        var entries: [Entry] = []
        for (index, item) in items.enumerated() {
            let path = "activities[\(index)]"
            guard item.objectValue != nil else {
                throw LedgerError(.badInput, "snapshot field \(path): expected an object", field: path)
            }
            let activity = try SnapshotField.string(item, "activity", path: path + ".activity")
            let stateName = try SnapshotField.string(item, "activityState", path: path + ".activityState")
            guard let phase = Phase(rawValue: stateName) else {
                throw LedgerError(
                    .badInput, "snapshot field \(path).activityState: unknown value \"\(stateName)\"",
                    field: path + ".activityState")
            }
            let timestamp = try SnapshotField.optionalInt(item, "contentTimestamp", path: path + ".contentTimestamp")
            entries.append(
                Entry(
                    activity: activity,
                    attributesType: try SnapshotField.optionalString(item, "attributesType", path: path) ?? "",
                    activityState: phase, contentTimestamp: timestamp,
                    contentHash: try SnapshotField.optionalString(item, "contentHash", path: path),
                    pushToken: try SnapshotField.optionalString(item, "pushToken", path: path)))
        }
        self.init(installation: installation, at: at, activities: entries)
    }
}

/// Field readers shared by the snapshot and truth parsers: errors name the field path.
enum SnapshotField {
    /// A required name (installation, activity): non-empty, and no control characters (`Identifier`'s rule).
    static func string(_ object: JSONValue, _ key: String, path: String) throws -> String {
        guard let text = object[key]?.stringValue, !text.isEmpty else {
            throw LedgerError(.badInput, "field \(path): expected a non-empty string", field: path)
        }
        if let scalar = Identifier.firstControlCharacter(text) {
            throw LedgerError(
                .badInput, "field \(path): control character \(Identifier.describe(scalar)) is not allowed", field: path)
        }
        if !Identifier.isNFC(text) { throw LedgerError(.badInput, "field \(path): \(Identifier.notNFC)", field: path) }
        return text
    }

    static func optionalString(_ object: JSONValue, _ key: String, path: String) throws -> String? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let text = value.stringValue else {
            throw LedgerError(.badInput, "field \(path).\(key): expected a string", field: path + "." + key)
        }
        return text
    }

    static func optionalInt(_ object: JSONValue, _ key: String, path: String) throws -> Int64? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let int = value.numberValue?.int64Value else {
            throw LedgerError(.badInput, "field \(path): expected an integer", field: path)
        }
        return int
    }

    static func instant(_ value: JSONValue?) -> Instant? {
        switch value {
        case .string(let text)?: Instant(rfc3339: text)
        case .number(let number)?: Instant(unixSeconds: number)
        default: nil
        }
    }
}
