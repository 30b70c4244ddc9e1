import ActivityModel
import Testing

@Suite("JSON and time primitives")
struct JSONAndInstantTests {
    @Test("the compact encoding keeps key order, number literals and does not escape slashes")
    func compact() throws {
        let text = #"{ "b" : [1, 2.50, -0.0e1, true, null], "a": "x/y \"q\" \u00e9 \ud83d\ude00\n" }"#
        let value = try JSONParser.parse(text)
        #expect(value.compactString == #"{"b":[1,2.50,-0.0e1,true,null],"a":"x/y \"q\" é 😀\n"}"#)
        #expect(value.objectValue?.keys == ["b", "a"])
    }

    @Test("malformed JSON is refused with a byte offset", arguments: [
        "", "{", "[1,]", "{\"a\" 1}", "01", "1.", "\"abc", "\"\\x\"", "tru", "{} x", "\"\u{01}\"", "\"\\ud800\"",
    ])
    func malformed(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSONParser.parse(text) }
    }

    @Test("deep nesting is refused instead of crashing")
    func deepNesting() {
        let text = String(repeating: "[", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(text) }
    }

    @Test("RFC 3339 with offsets and fractions, and Unix seconds, parse to the same instant")
    func instants() throws {
        let expected = Instant(milliseconds: 1_795_209_243_250)
        #expect(Instant(rfc3339: "2026-11-20T21:14:03.250Z") == expected)
        #expect(Instant(rfc3339: "2026-11-20T22:14:03.25+01:00") == expected)
        #expect(Instant(rfc3339: "2026-11-20T21:14:03.250999Z") == expected)
        #expect(Instant(rfc3339: "2026-11-20t21:14:03.250z") == expected)
        #expect(Instant(unixSeconds: JSONNumber(literal: "1795209243.25")) == expected)
        #expect(expected.rfc3339 == "2026-11-20T21:14:03.250Z")
        #expect(Instant(rfc3339: "2026-02-30T00:00:00Z") == nil)
        #expect(Instant(rfc3339: "2026-11-20T21:14:03") == nil)
        #expect(Instant(milliseconds: -1).rfc3339 == "1969-12-31T23:59:59.999Z")
        #expect(Instant(rfc3339: "2024-02-29T00:00:00Z")?.rfc3339 == "2024-02-29T00:00:00.000Z")
    }

    @Test("content hash is lowercase hex SHA-256 of the compact content-state")
    func contentHash() {
        // SHA-256 of the two bytes "{}".
        #expect(
            ActivityContent.hash(of: [:])
                == "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a")
    }
}
