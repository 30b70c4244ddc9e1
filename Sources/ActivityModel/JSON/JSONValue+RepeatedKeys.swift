extension JSONValue {
    /// The dotted path (`data.content.state.eta`, `events[0]…` left to the caller) of the first key an object of
    /// this value gives twice, if any. Keys are the same key when they are equal strings, as every lookup of the
    /// ledger compares them.
    ///
    /// The doors refuse such JSON (RFC 7493 I-JSON): readers disagree on which of the two values counts — the
    /// ledger's field reader took the first, a JavaScript or Python client takes the last — so one event would
    /// mean different things to the ledger and to whoever reads its export.
    public func firstRepeatedKey(path: String = "") -> String? {
        switch self {
        case .null, .bool, .number, .string: return nil
        case .array(let items):
            for (index, item) in items.enumerated() {
                if let found = item.firstRepeatedKey(path: "\(path)[\(index)]") { return found }
            }
            return nil
        case .object(let object):
            let members = object.members
            if members.count > 1 {
                if members.count <= 8 {
                    for index in members.indices.dropFirst()
                    where members[..<index].contains(where: { $0.key == members[index].key }) {
                        return Self.join(path, members[index].key)
                    }
                } else {
                    var seen = Set<String>()
                    for member in members where !seen.insert(member.key).inserted { return Self.join(path, member.key) }
                }
            }
            for member in members {
                if let found = member.value.firstRepeatedKey(path: Self.join(path, member.key)) { return found }
            }
            return nil
        }
    }

    private static func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
}
