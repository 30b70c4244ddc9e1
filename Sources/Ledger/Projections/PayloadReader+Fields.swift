import ActivityModel
import Foundation

/// Field values as `FieldReader` reads them: JSON `null` is absent, times are RFC 3339 or Unix seconds, numbers
/// are read through `JSONNumber` exactly as the full decoder does. A value of the wrong kind is unusual.
extension PayloadReader {
    /// Nesting level assumed for every skipped value: at least its real level (a state is at 4), so that the
    /// scanner's depth limit stays below `JSONParser`'s.
    static let skipDepth = 5

    /// Walks an object's members, handing known ones (by index in `fields`) to `body` and skipping the rest.
    /// A known key given twice is unusual (the full decoder reads the first; rare enough not to mirror).
    mutating func members(
        _ fields: [StaticString], _ body: (inout PayloadReader, Int) throws(UnusualPayload) -> Void
    ) throws(UnusualPayload) {
        var seen = Seen()
        guard try scanner.beginObject() else { return }
        repeat {
            let field = try seen.field(scanner.key(), fields)
            if field < 0 { try skip() } else { try body(&self, field) }
        } while try scanner.nextMember()
    }

    mutating func skip(depth: Int = skipDepth) throws(UnusualPayload) {
        _ = try scanner.skipValue(depth: depth)
    }

    mutating func optionalString() throws(UnusualPayload) -> String? {
        if try scanner.null() { return nil }
        guard scanner.current == UInt8(ascii: "\"") else { throw UnusualPayload() }
        return try scanner.string()
    }

    /// A name (`FieldReader.name`'s rule): a string without control characters (`Identifier`).
    mutating func optionalName() throws(UnusualPayload) -> String? {
        guard let name = try optionalString() else { return nil }
        if Identifier.firstControlCharacter(name) != nil { throw UnusualPayload() }
        return name
    }

    /// A name whose value is not needed: its content's range. An escaped one (a control character must be
    /// escaped in JSON) or one holding DEL or a C1 control goes to the full decoder, which words the refusal.
    @discardableResult
    mutating func validateName() throws(UnusualPayload) -> Range<Int>? {
        if try scanner.null() { return nil }
        guard scanner.current == UInt8(ascii: "\"") else { throw UnusualPayload() }
        let range = try scanner.stringRange(allowEscapes: false)
        // DEL is 0x7F; C1 controls are U+0080–U+009F, UTF-8 0xC2 0x80–0x9F.
        if scanner.bytes[range].contains(where: { $0 == 0x7F || $0 == 0xC2 }) { throw UnusualPayload() }
        return range
    }

    /// A string whose value is not needed: checked (escapes allowed), not made; its content's range.
    @discardableResult
    mutating func validateString() throws(UnusualPayload) -> Range<Int>? {
        if try scanner.null() { return nil }
        guard scanner.current == UInt8(ascii: "\"") else { throw UnusualPayload() }
        return try scanner.stringRange(allowEscapes: true)
    }

    /// `source`, matched where its bytes lie, most frequent first (the generic enum lookup, then the string made
    /// for each event, showed in rebuild profiles).
    mutating func optionalSource() throws(UnusualPayload) -> Source? {
        if try scanner.null() { return nil }
        guard scanner.current == UInt8(ascii: "\"") else { throw UnusualPayload() }
        let text = UnsafeBufferPointer(rebasing: scanner.bytes[try scanner.stringRange(allowEscapes: false)])
        let sources: [Source] = [.server, .apns, .device, .app, .ledger]
        guard let index = Seen.index(of: text, in: ["server", "apns", "device", "app", "ledger"]) else {
            throw UnusualPayload()
        }
        return sources[index]
    }

    mutating func optionalEnum<E: RawRepresentable>(_: E.Type) throws(UnusualPayload) -> E? where E.RawValue == String {
        guard let text = try optionalString() else { return nil }
        guard let value = E(rawValue: text) else { throw UnusualPayload() }
        return value
    }

    mutating func optionalNumber() throws(UnusualPayload) -> JSONNumber? {
        if try scanner.null() { return nil }
        guard let text = try scanner.numberText() else { throw UnusualPayload() }
        return JSONNumber(literal: text)
    }

    mutating func optionalInt() throws(UnusualPayload) -> Int64? {
        if let plain = scanner.plainInteger() { return plain }
        guard let number = try optionalNumber() else { return nil }
        guard let int = number.int64Value else { throw UnusualPayload() }
        return int
    }

    /// A time as Unix milliseconds: an RFC 3339 string or a number of Unix seconds (`FieldReader.instant`).
    mutating func optionalInstant() throws(UnusualPayload) -> Int64? {
        if try scanner.null() { return nil }
        let instant: Instant?
        if scanner.current == UInt8(ascii: "\"") {
            instant = Instant(rfc3339: try rfc3339Bytes())
        } else if let text = try scanner.numberText() {
            instant = Instant(unixSeconds: JSONNumber(literal: text))
        } else {
            throw UnusualPayload()
        }
        guard let instant else { throw UnusualPayload() }
        return instant.milliseconds
    }

    /// A time string's bytes where they lie in the payload (no string made; an escaped one is unusual, as
    /// `scanner.string()` makes it).
    private mutating func rfc3339Bytes() throws(UnusualPayload) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: scanner.bytes[try scanner.stringRange(allowEscapes: false)])
    }

    /// `content`: `state` stays bytes of the payload (or a copy of its own, from a lent block), measured for the
    /// 4096-byte rule while it is validated.
    mutating func content() throws(UnusualPayload) -> ProjectionEvent.Content {
        var state: Range<Int>?
        var size = 0
        var staleDate: Int64?
        try members(Self.contentFields) { reader, field throws(UnusualPayload) in
            switch field {
            case 0:
                guard reader.scanner.current == UInt8(ascii: "{") else { throw UnusualPayload() }
                let start = reader.scanner.index
                size = try reader.scanner.skipValue(depth: 4)
                state = start..<reader.scanner.index
            case 1: staleDate = try reader.optionalInstant()
            default:
                // A plain integer is finite; any other number is read as `FieldReader` reads it.
                if reader.scanner.plainInteger() == nil, let score = try reader.optionalNumber(),
                    !score.doubleValue.isFinite
                {
                    throw UnusualPayload()
                }
            }
        }
        guard let state else { throw UnusualPayload() }
        return ProjectionEvent.Content(
            state: payloadOwner.map { .stored(payload: $0, range: state) }
                ?? .stored(payload: Array(UnsafeBufferPointer(rebasing: scanner.bytes[state])), range: 0..<state.count),
            staleDate: staleDate,
            isTooLarge: size > ActivityContent.maximumStateSize)
    }

    static let contentFields: [StaticString] = ["state", "staleDate", "relevanceScore"]

    /// `"none"`, `"token"` or `{"channel": id}`.
    mutating func pushType() throws(UnusualPayload) -> PushType? {
        if try scanner.null() { return nil }
        if scanner.current == UInt8(ascii: "\"") {
            switch try scanner.string() {
            case "none": return PushType.none
            case "token": return .token
            default: throw UnusualPayload()
            }
        }
        var channel: String?
        try members(["channel"]) { reader, _ throws(UnusualPayload) in channel = try reader.optionalName() }
        guard let channel, !channel.isEmpty else { throw UnusualPayload() }
        return .channel(channel)
    }

    /// `"default"`, `"immediate"` or `{"after": time}`.
    mutating func dismissalPolicy() throws(UnusualPayload) -> DismissalPolicy? {
        if try scanner.null() { return nil }
        if scanner.current == UInt8(ascii: "\"") {
            switch try scanner.string() {
            case "default": return .default
            case "immediate": return .immediate
            default: throw UnusualPayload()
            }
        }
        var after: Int64?
        try members(["after"]) { reader, _ throws(UnusualPayload) in after = try reader.optionalInstant() }
        guard let after else { throw UnusualPayload() }
        return .after(Instant(milliseconds: after))
    }

    /// Validated only: `title` and `body` strings or objects, `sound` a string.
    mutating func alert() throws(UnusualPayload) {
        if try scanner.null() { return }
        try members(["title", "body", "sound"]) { reader, field throws(UnusualPayload) in
            if field == 2 {
                _ = try reader.optionalString()
            } else if try !reader.scanner.null() {
                guard reader.scanner.current == UInt8(ascii: "\"") || reader.scanner.current == UInt8(ascii: "{")
                else { throw UnusualPayload() }
                try reader.skip()
            }
        }
    }

    /// Validated only: 5 or 10.
    mutating func priority() throws(UnusualPayload) {
        guard let priority = try optionalInt() else { return }
        guard priority == 5 || priority == 10 else { throw UnusualPayload() }
    }

    /// Unix milliseconds as a number, or an RFC 3339 string.
    mutating func apnsTimestamp() throws(UnusualPayload) -> Int64? {
        if try scanner.null() { return nil }
        let instant: Instant?
        if scanner.current == UInt8(ascii: "\"") {
            instant = Instant(rfc3339: try rfc3339Bytes())
        } else if let text = try scanner.numberText() {
            instant = Instant(unixMilliseconds: JSONNumber(literal: text))
        } else {
            throw UnusualPayload()
        }
        guard let instant else { throw UnusualPayload() }
        return instant.milliseconds
    }
}

/// Which known keys an object has given, so that a repeated one is noticed.
struct Seen {
    private var bits: UInt64 = 0

    /// Index of `key` in `fields`, or -1 when it is not one of them; unusual when given before.
    mutating func field(_ key: UnsafeBufferPointer<UInt8>, _ fields: [StaticString]) throws(UnusualPayload) -> Int {
        guard let index = Self.index(of: key, in: fields) else { return -1 }
        let bit: UInt64 = 1 << UInt64(index)
        if bits & bit != 0 { throw UnusualPayload() }
        bits |= bit
        return index
    }

    /// Index of the first of `names` whose UTF-8 bytes are `bytes`, or nil. Compared byte by byte in place: names
    /// are a few bytes long and most differ in their first (calling `memcmp` for each was ~2 % of a sealed rebuild).
    @inline(__always)
    static func index(of bytes: UnsafeBufferPointer<UInt8>, in names: [StaticString]) -> Int? {
        let count = bytes.count
        search: for (index, name) in names.enumerated() where name.utf8CodeUnitCount == count {
            let start = name.utf8Start
            for offset in 0..<count where start[offset] != bytes[offset] { continue search }
            return index
        }
        return nil
    }
}
