/// One generated event, both as fields (for appending directly) and as its JSON Lines text.
public struct CorpusEvent: Sendable, Hashable {
    public var id: String
    public var stream: String
    public var type: String
    /// Unix milliseconds.
    public var at: Int64
    public var source: String
    /// Compact JSON of the event's `data` object.
    public var data: String

    /// The interchange line (SPEC §2): id, stream, type, at (RFC 3339), source, data.
    public var line: String {
        "{\"id\":\(JSONText.quote(id)),\"stream\":\(JSONText.quote(stream)),\"type\":\(JSONText.quote(type)),"
            + "\"at\":\"\(JSONText.rfc3339(milliseconds: at))\",\"source\":\(JSONText.quote(source)),\"data\":\(data)}"
    }

    /// What a store keeps as the opaque payload beside its own columns: `{"source":…,"data":…}`.
    public var payload: [UInt8] {
        Array("{\"source\":\(JSONText.quote(source)),\"data\":\(data)}".utf8)
    }
}
