import ActivityModel

extension DeviceSnapshot {
    /// Parses the SPEC §5 snapshot `{installation, at, activities: [{activity, attributesType, activityState,
    /// contentTimestamp, contentHash, pushToken}]}` with ActivityModel's one snapshot parser
    /// (`DeviceSnapshot.decode`); `at` is RFC 3339 or Unix seconds, as an event's.
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
        do {
            self = try DeviceSnapshot.decode(value)
        } catch {
            throw LedgerError(.badInput, "snapshot: \(error.description)", field: error.field, cause: error)
        }
    }
}

/// The truth parser's reading of a time: RFC 3339 or Unix seconds, as an event's `at`.
enum SnapshotField {
    static func instant(_ value: JSONValue?) -> Instant? {
        switch value {
        case .string(let text)?: Instant(rfc3339: text)
        case .number(let number)?: Instant(unixSeconds: number)
        default: nil
        }
    }
}
