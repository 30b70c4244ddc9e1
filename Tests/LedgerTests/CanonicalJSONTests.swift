import ActivityModel
import LedgerTesting
import Testing

@testable import Ledger

/// `CanonicalJSON` decides whether two content states are the same (nightly drift, the intended state's hash), so
/// its form is held to its definition: keys sorted by UTF-8 bytes at every depth, a repeated key's last value kept
/// (keys equal as Swift strings are one key), numbers by value.
@Suite struct CanonicalJSONTests {
    @Test func sortsKeysByBytesAndKeepsTheLastOfARepeatedKey() {
        let state = JSONValue.object(JSONObject([
            .init(key: "b", value: .int(1)),
            .init(key: "a", value: .object(JSONObject([
                .init(key: "z", value: .number(JSONNumber(literal: "1.0"))), .init(key: "Z", value: .bool(true)),
            ]))),
            .init(key: "b", value: .string("last")),
            .init(key: "é", value: .null),
            .init(key: "e\u{301}", value: .int(2)),  // the same key as "é" to Swift: the last spelling and value win
        ]))
        #expect(
            String(decoding: CanonicalJSON.bytes(state), as: UTF8.self)
                == #"{"a":{"Z":true,"z":1},"b":"last","e\#u{301}":2}"#)
    }

    /// The definition written the plain way (a set of the keys seen from the end, then a sort of byte arrays),
    /// against the implementation, over generated objects with repeats, ASCII and non-ASCII keys, and nesting.
    @Test func equalsItsDefinitionOverGeneratedObjects() {
        var random = SeededRandom(seed: 2026)
        let keys = ["a", "b", "B", "ab", "a\u{0}", "", "é", "e\u{301}", "ü", "z", "Zz", "\u{1F600}", "aa", "a b"]
        func value(depth: Int) -> JSONValue {
            switch random.next() % (depth > 2 ? 4 : 6) {
            case 0: return .int(Int64(random.next() % 100))
            case 1: return .number(JSONNumber(literal: ["1.0", "1e0", "-0.5", "2.50"][Int(random.next() % 4)]))
            case 2: return .string(keys[Int(random.next() % UInt64(keys.count))])
            case 3: return .null
            case 4: return .array((0..<Int(random.next() % 3)).map { _ in value(depth: depth + 1) })
            default:
                // Up to 8 keys are deduplicated by a look at the kept ones, more through a set: both are generated.
                let count = Int(random.next() % (random.next() % 4 == 0 ? 20 : 8))
                let ascii = random.next() % 2 == 0
                let pool = ascii ? keys.filter { $0.utf8.allSatisfy { $0 < 0x80 } } : keys
                return .object(JSONObject((0..<count).map { _ in
                    .init(key: pool[Int(random.next() % UInt64(pool.count))], value: value(depth: depth + 1))
                }))
            }
        }
        for _ in 0..<2_000 {
            let state = value(depth: 0)
            #expect(CanonicalJSON.canonical(state) == Self.definition(state))
            #expect(CanonicalJSON.bytes(state) == Self.definition(state).compactBytes)
        }
    }

    private static func definition(_ value: JSONValue) -> JSONValue {
        switch value {
        case .null, .bool, .string: return value
        case .number(let number): return number.int64Value.map { .int($0) } ?? .double(number.doubleValue)
        case .array(let items): return .array(items.map(definition))
        case .object(let object):
            var seen: Set<String> = []
            var members: [JSONObject.Member] = []
            for member in object.members.reversed() where seen.insert(member.key).inserted {
                members.append(.init(key: member.key, value: definition(member.value)))
            }
            members.sort { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
            return .object(JSONObject(members))
        }
    }
}
