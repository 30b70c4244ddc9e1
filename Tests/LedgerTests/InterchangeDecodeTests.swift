@testable import ActivityModel
import Foundation
import LedgerTesting
import Testing

/// An interchange line is read in place (`JSONObjectText`, the content state kept as text) unless it has something
/// the interchange rules could refuse; it must decode exactly as its parsed tree does, refuse what the tree refuses
/// with the same error, and be stored (`encodePayload`) as the same bytes.
@Suite("An interchange line read in place decodes as its parsed tree does")
struct InterchangeDecodeTests {
    /// The tree's verdict: the parser's error, or the interchange rules over the parsed line.
    static func tree(_ line: [UInt8]) -> Result<LedgerEvent, EventDecodingError> {
        Result { () throws(EventDecodingError) -> LedgerEvent in
            let value: JSONValue
            do throws(JSONParseError) { value = try JSONParser.parse(line) } catch {
                throw EventDecodingError(code: .malformedJSON, field: "", expected: error.description)
            }
            return try EventCodec.decode(value)
        }
    }

    /// Checks one line through every byte entry of the decoder; true when it decoded.
    @discardableResult
    static func check(_ line: [UInt8], _ comment: String = "") -> Bool {
        let expected = tree(line)
        let owned = Result { () throws(EventDecodingError) -> LedgerEvent in try EventCodec.decode(line) }
        let sliced = Result { () throws(EventDecodingError) -> LedgerEvent in
            try EventCodec.decode(([0x20] + line + [0x0A])[1..<(line.count + 1)])
        }
        let lent = line.withUnsafeBytes { bytes in
            Result { () throws(EventDecodingError) -> LedgerEvent in try EventCodec.decode(bytes) }
        }
        #expect(owned == expected, "\(comment)")
        #expect(sliced == expected, "slice: \(comment)")
        #expect(lent == expected, "lent: \(comment)")
        guard case .success(let event) = expected, case .success(let read) = owned else { return false }
        #expect(EventCodec.encodePayload(read) == EventCodec.encodePayload(event), "stored form: \(comment)")
        #expect(EventCodec.encode(read) == EventCodec.encode(event), "export: \(comment)")
        for (mine, theirs) in zip(read.contents, event.contents) {
            #expect(mine.encodedStateSize == theirs.encodedStateSize, "\(comment)")
            #expect(mine.contentHash == theirs.contentHash, "\(comment)")
        }
        return true
    }

    static func update(state: String, extra: String = "") -> String {
        #"{"id":"u-1","stream":"activity:A1","type":"update","at":"2026-11-20T21:00:01Z","data":{"content":{"state":"#
            + state + #"},"timestamp":1795000000\#(extra)}}"#
    }

    @Test("every line of random workloads and of the corpus decodes the same in place")
    func workloadsAgree() {
        var lines = RandomWorkload(seed: 31).lines()
        lines += CorpusGenerator(seed: 6, activities: 30, eventsPerActivity: 50).lines()
        for line in lines { #expect(Self.check(Array(line.utf8), line)) }
    }

    static let members = (0..<70).map { #""k\#($0)":\#($0)"# }

    @Test("keys given twice at any depth, escaped and non-ASCII keys, numbers a double may not hold", arguments: [
        // A key given twice: the envelope, data, content, the state and deeper, an array's object, an alert.
        #"{"id":"u-1","id":"u-2","stream":"activity:A1","type":"dismiss","at":1795000000,"data":{"by":"user"}}"#,
        #"{"stream":"activity:A1","type":"dismiss","at":1795000000,"data":{"by":"user","by":"system"}}"#,
        update(state: #"{"a":1},"state":{"a":2}"#),
        update(state: #"{"a":1,"b":2,"a":3}"#),
        update(state: #"{"a":{"b":{"c":1,"c":1}}}"#),
        update(state: #"{"a":[1,{"x":1,"y":2,"x":3}]}"#),
        update(state: #"{"a":1}"#, extra: #","alert":{"title":"t","title":"u"}"#),
        update(state: #"{"":1,"":2}"#),
        update(state: #"{"ab":1,"ba":2,"a":3,"b":4}"#),
        // The same key spelled with an escape, or in two Unicode forms; escaped keys that are not repeated.
        update(state: #"{"a":1,"\u0061":2}"#),
        update(state: #"{"é":1,"e\#u{0301}":2}"#),
        update(state: #"{"é":1,"ü":2}"#),
        #"{"\u0069d":"u-1","stream":"activity:A1","type":"dismiss","at":1795000000,"data":{"by":"user"}}"#,
        #"{"id":"u-1","stream":"activity:A1","type":"dismiss","at":1795000000,"d\u0061ta":{"by":"user"},"data":{}}"#,
        // Numbers: exponents (held by a double or not), long literals, the time as a number.
        update(state: #"{"a":1e5,"b":-2.5E-3}"#),
        update(state: #"{"a":1e400}"#),
        update(state: #"{"a":[1,2,-1E+999]}"#),
        update(state: #"{"a":"# + String(repeating: "9", count: 299) + "}"),
        update(state: #"{"a":"# + String(repeating: "9", count: 300) + "}"),
        update(state: #"{"a":0."# + String(repeating: "0", count: 400) + "1}"),
        #"{"stream":"activity:A1","type":"dismiss","at":1.795e9,"data":{"by":"user"}}"#,
        #"{"stream":"activity:A1","type":"dismiss","at":1e999,"data":{"by":"user"}}"#,
        // Objects of more members than the in-place check compares, with and without a repeat.
        update(state: "{" + members.joined(separator: ",") + "}"),
        update(state: "{" + (members + [#""k3":0"#]).joined(separator: ",") + "}"),
        // Times read from the text's bytes, or (escaped, invalid, a number) by the value's own path.
        #"{"stream":"activity:A1","type":"dismiss","at":"2026-13-20T21:00:01Z","data":{"by":"user"}}"#,
        #"{"stream":"activity:A1","type":"dismiss","at":"2026-11-20T21:00:01\u005A","data":{"by":"user"}}"#,
        #"{"stream":"activity:A1","type":"dismiss","at":"2026-11-20T21:00:01+01:30","data":{"by":"user"}}"#,
        #"{"stream":"activity:A1","type":"dismiss","at":"","data":{"by":"user"}}"#,
        #"{"stream":"activity:A1","type":"dismiss","at":null,"data":{"by":"user"}}"#,
        #"{"stream":"activity:A1","type":"dismiss","at":"2026-11-20T21:00:01é","data":{"by":"user"}}"#,
        update(state: #"{"a":1},"staleDate":"2026-11-20T21:00:01.5Z"#),
        update(state: #"{"a":1},"staleDate":"20261120"#),
        update(state: #"{"a":1},"staleDate":null"#),
        update(state: #"{"a":1},"staleDate":1795000000.25"#),
        // Whitespace, nulls, escapes in values, an empty state, a deep one, trailing bytes, not an object.
        " { \"id\" : \"u-1\" , \"stream\":\"activity:A1\",\"type\":\"dismiss\",\"at\":1795000000,\"data\":{\"by\":\"user\"} } ",
        update(state: #"{ "a" : [ 1 , { } ] }"#),
        update(state: #"{"a":"\u00e9\/\n"}"#),
        update(state: #"{}"#, extra: #","priority":null,"alert":null"#),
        update(state: String(repeating: #"{"a":"#, count: 200) + "1" + String(repeating: "}", count: 200)),
        update(state: String(repeating: "[", count: 505) + String(repeating: "]", count: 505)),
        update(state: #"{"a":1}"#) + "}",
        "[1,2]",
        "",
        #"{"stream":"activity:A1","type":"dismiss","at":1795000000,"data":{"by":"user"},"extra":{"x":1,"x":2}}"#,
    ])
    func oddLines(line: String) {
        Self.check(Array(line.utf8), line)
    }

    @Test("randomly damaged lines get the tree's verdict in place")
    func damagedLines() {
        var random = SeededRandom(seed: 78)
        let samples = RandomWorkload(seed: 23, activities: 6, eventsPerActivity: 30).lines().map { Array($0.utf8) }
        var decoded = 0
        var refused = 0
        for round in 0..<20_000 {
            var line = samples[round % samples.count]
            RandomDamage.damage(&line, using: &random)
            if Self.check(line, String(decoding: line, as: UTF8.self)) { decoded += 1 } else { refused += 1 }
        }
        #expect(decoded > 1_000)
        #expect(refused > 1_000)
    }
}
