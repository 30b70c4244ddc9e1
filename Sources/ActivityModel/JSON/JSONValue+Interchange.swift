extension JSONValue {
    /// What a door of the ledger refuses in interchange JSON beyond its syntax (RFC 7493, I-JSON), found at
    /// `field`: the dotted path (`data.content.state.eta`; `events[0]…` left to the caller).
    public struct InterchangeProblem: Sendable, Equatable {
        public var field: String
        public var expected: String
        public var found: String
    }

    /// The first of, in document order:
    /// - a key an object gives twice. Keys are the same key when they are equal strings, as every lookup of the
    ///   ledger compares them. Readers disagree on which of the two values counts — the ledger's field reader
    ///   took the first, a JavaScript or Python client takes the last — so one event would mean different things
    ///   to the ledger and to whoever reads its export.
    /// - a number a double cannot hold (`1e400`: it overflows to infinity). The ledger keeps number literals as
    ///   sent, but the HTTP door's decoder, the device's `JSONDecoder` and a push's reader all read a double:
    ///   such a content state would be stored and never be shown. Large integers (`12345678901234567890`) and
    ///   literals that round to zero stay valid: a double holds them, if not exactly.
    ///
    /// The one home of this rule: events (`EventCodec`), device snapshots, truth lines and the HTTP append bodies
    /// all call it, so the CLI import and the HTTP service refuse the same documents.
    public func firstInterchangeProblem(path: String = "") -> InterchangeProblem? {
        switch self {
        case .null, .bool, .string: return nil
        case .number(let number):
            // Only an exponent or ~309 digits reach past a double: most literals need no conversion.
            let utf8 = number.text.utf8
            if utf8.count < 300, !utf8.contains(where: { $0 | 0x20 == UInt8(ascii: "e") }) { return nil }
            guard number.doubleValue.isFinite else {
                return InterchangeProblem(
                    field: path, expected: "a number a double can hold (RFC 7493)", found: number.text)
            }
            return nil
        case .array(let items):
            for (index, item) in items.enumerated() {
                if let found = item.firstInterchangeProblem(path: "\(path)[\(index)]") { return found }
            }
            return nil
        case .object(let object):
            let members = object.members
            if members.count > 1 {
                if members.count <= 8 {
                    for index in members.indices.dropFirst()
                    where members[..<index].contains(where: { $0.key == members[index].key }) {
                        return Self.repeated(Self.join(path, members[index].key))
                    }
                } else {
                    var seen = Set<String>()
                    for member in members where !seen.insert(member.key).inserted {
                        return Self.repeated(Self.join(path, member.key))
                    }
                }
            }
            for member in members {
                if let found = member.value.firstInterchangeProblem(path: Self.join(path, member.key)) { return found }
            }
            return nil
        }
    }

    private static func repeated(_ field: String) -> InterchangeProblem {
        InterchangeProblem(field: field, expected: "each key once in an object (RFC 7493)", found: "the key given twice")
    }

    private static func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
}
