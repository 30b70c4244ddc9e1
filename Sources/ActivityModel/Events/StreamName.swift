/// The kind of stream an event belongs to.
public enum StreamKind: String, Hashable, Sendable, CaseIterable {
    case activity, installation, channel
}

/// `activity:<id>`, `installation:<id>` or `channel:<id>`.
public struct StreamName: Hashable, Sendable, CustomStringConvertible, Comparable {
    public var kind: StreamKind
    public var id: String

    public init(kind: StreamKind, id: String) {
        self.kind = kind
        self.id = id
    }

    public static func activity(_ id: String) -> StreamName { StreamName(kind: .activity, id: id) }
    public static func installation(_ id: String) -> StreamName { StreamName(kind: .installation, id: id) }
    public static func channel(_ id: String) -> StreamName { StreamName(kind: .channel, id: id) }

    /// Parses `kind:id`; the id is everything after the first colon, not empty and without control characters
    /// (`Identifier`).
    /// Splits on UTF-8 bytes, not Characters: an id may begin with a combining mark, which would otherwise fuse
    /// with the colon into one grapheme and vanish from the id.
    public init?(_ string: String) {
        let bytes = string.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let kind: StreamKind
        // Not `StreamKind(rawValue:)`: its generic lookup showed once per decoded event in query profiles.
        switch string[..<colon] {
        case "activity": kind = .activity
        case "channel": kind = .channel
        case "installation": kind = .installation
        default: return nil
        }
        let id = String(decoding: bytes[bytes.index(after: colon)...], as: UTF8.self)
        guard !id.isEmpty, Identifier.firstControlCharacter(id) == nil else { return nil }
        self.init(kind: kind, id: id)
    }

    public var description: String { "\(kind.rawValue):\(id)" }

    public static func < (lhs: StreamName, rhs: StreamName) -> Bool { lhs.description < rhs.description }
}

extension StreamName: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        guard let name = StreamName(string) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "expected activity:<id>, installation:<id> or channel:<id>")
        }
        self = name
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
