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
    /// all call it, so the CLI import and the HTTP service refuse the same documents. (`EventCodec` reads a line in
    /// place, without a tree, only when `PayloadScanner.init(interchange:)` finds nothing this rule could refuse.)
    public func firstInterchangeProblem(path: String = "") -> InterchangeProblem? {
        // The path is spelled only for a problem found: the walk notes its steps on the way back out.
        var steps: [PathStep] = []
        guard var problem = firstProblem(steps: &steps) else { return nil }
        var field = path
        for step in steps.reversed() {
            switch step {
            case .key(let key): field = field.isEmpty ? key : "\(field).\(key)"
            case .index(let index): field += "[\(index)]"
            }
        }
        problem.field = field
        return problem
    }

    private enum PathStep {
        case key(String)
        case index(Int)
    }

    /// The first problem with an empty `field`; `steps` gets the path to it, innermost first.
    private func firstProblem(steps: inout [PathStep]) -> InterchangeProblem? {
        switch self {
        case .null, .bool, .string: return nil
        case .number(let number):
            // Only an exponent or ~309 digits reach past a double: most literals need no conversion.
            let utf8 = number.text.utf8
            if utf8.count < 300, !utf8.contains(where: { $0 | 0x20 == UInt8(ascii: "e") }) { return nil }
            guard number.doubleValue.isFinite else {
                return InterchangeProblem(
                    field: "", expected: "a number a double can hold (RFC 7493)", found: number.text)
            }
            return nil
        case .array(let items):
            for (index, item) in items.enumerated() {
                if let found = item.firstProblem(steps: &steps) {
                    steps.append(.index(index))
                    return found
                }
            }
            return nil
        case .object(let object):
            let members = object.members
            if members.count > 1, let repeated = Self.firstRepeatedKey(members) {
                steps.append(.key(repeated))
                return InterchangeProblem(
                    field: "", expected: "each key once in an object (RFC 7493)", found: "the key given twice")
            }
            for member in members {
                if let found = member.value.firstProblem(steps: &steps) {
                    steps.append(.key(member.key))
                    return found
                }
            }
            return nil
        }
    }

    private static func firstRepeatedKey(_ members: [JSONObject.Member]) -> String? {
        if members.count <= 8 {
            for index in members.indices.dropFirst()
            where members[..<index].contains(where: { $0.key == members[index].key }) {
                return members[index].key
            }
            return nil
        }
        var seen = Set<String>()
        for member in members where !seen.insert(member.key).inserted { return member.key }
        return nil
    }
}
