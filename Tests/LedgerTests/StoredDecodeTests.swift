@testable import ActivityModel
import Foundation
import LedgerTesting
import Testing

/// A stored payload is read in place (`JSONObjectText`, content states kept as text: `LazyJSON`); it must decode
/// exactly as its parsed tree does, and refuse what the tree refuses with the same error.
@Suite("A stored payload read in place decodes as its parsed tree does")
struct StoredDecodeTests {
    static let at = Instant(milliseconds: 1_795_000_000_000)

    /// The tree's verdict: the parser's error, or the storage rules over the parsed payload.
    static func tree(_ payload: [UInt8], type: String, stream: String) -> Result<LedgerEvent, EventDecodingError> {
        Result { () throws(EventDecodingError) -> LedgerEvent in
            let value: JSONValue
            do throws(JSONParseError) { value = try JSONParser.parse(payload) } catch {
                throw EventDecodingError(code: .malformedJSON, field: "", expected: error.description)
            }
            guard let type = EventType(rawValue: type) else {
                throw EventDecodingError(
                    code: .unknownType, field: "type", expected: FieldReader.oneOf(EventType.self), found: "\"\(type)\"")
            }
            guard let stream = StreamName(stream) else {
                throw EventDecodingError(
                    code: .wrongType, field: "stream", expected: EventCodec.streamExpectation, found: stream)
            }
            return try EventCodec.decodePayload(parsed: value, id: "e-1", stream: stream, type: type, at: at)
        }
    }

    /// Checks one payload through every entry of the in-place reader; true when it decoded.
    @discardableResult
    static func check(_ payload: [UInt8], type: String, stream: String, _ comment: String = "") -> Bool {
        let expected = tree(payload, type: type, stream: stream)
        let owned = Result { () throws(EventDecodingError) -> LedgerEvent in
            try EventCodec.decodePayload(payload, id: "e-1", stream: stream, type: type, at: at)
        }
        let lent = payload.withUnsafeBytes { bytes in
            Result { () throws(EventDecodingError) -> LedgerEvent in
                try EventCodec.decodePayload(bytes, id: "e-1", stream: stream, type: type, at: at)
            }
        }
        #expect(owned == expected, "\(comment)")
        #expect(lent == expected, "lent: \(comment)")
        if case .success(let resolved)? = try? StreamName(stream).map({ name in
            Result { () throws(EventDecodingError) -> LedgerEvent in
                try EventCodec.decodePayload(
                    payload, id: "e-1", stream: name, type: EventType(rawValue: type) ?? .dismiss, at: at)
            }
        }), case .success(let want) = expected {
            #expect(resolved == want, "resolved: \(comment)")
        }
        guard case .success(let event) = expected, case .success(let read) = owned else { return false }
        // Equal values, and what the fold derives from a state: its size, its hash, its compact bytes.
        for (mine, theirs) in zip(read.contents, event.contents) {
            #expect(mine.encodedStateSize == theirs.encodedStateSize, "\(comment)")
            #expect(mine.contentHash == theirs.contentHash, "\(comment)")
            #expect(mine.storedState.compactBytes == theirs.state.compactBytes, "\(comment)")
            #expect(ContentSnapshot(mine, timestamp: 1, event: nil).contentHash == theirs.contentHash)
        }
        #expect(read.contents.count == event.contents.count)
        return true
    }

    @Test("every event of random workloads and of the corpus decodes the same in place")
    func workloadsAgree() throws {
        var lines = RandomWorkload(seed: 21).lines()
        lines += CorpusGenerator(seed: 5, activities: 30, eventsPerActivity: 50).lines()
        var types: Set<EventType> = []
        for line in lines {
            let event = try EventCodec.decode(line)
            types.insert(event.type)
            #expect(
                Self.check(EventCodec.encodePayload(event), type: event.type.rawValue, stream: event.stream.description, line))
        }
        #expect(types.count >= 8, "\(types)")
    }

    @Test("odd payloads: escapes, whitespace, nulls, repeated and escaped keys, refusals", arguments: OddPayloads.valid + OddPayloads.deferred)
    func oddPayloads(_ odd: OddPayload) {
        Self.check(Array(odd.payload.utf8), type: odd.type, stream: odd.stream, odd.payload)
    }

    @Test("keys escaped or not in NFC are found as the tree finds them; deep states are left to the parser", arguments: [
        #"{"\u0064ata":{"content":{"st\u0061te":{"a":1}},"timestamp":1795000000}}"#,
        #"{"data":{"content":{"state":{"a":1},"state":{"b":2}},"timestamp":1795000000,"timestamp":5}}"#,
        #"{"data":{"content":{"state":{"a":1}},"timestamp":1795000000},"data":{"content":null}}"#,
        #"{"data":{"content":{"sta\u0301te":{"a":1},"state":{"c":3}},"timestamp":1795000000}}"#,
        #"{"data":{"content":{"state" :\#t{ "a" : [ 1 , { } ] } },"timestamp":1795000000}}"#,
        #"{"data":{"content":{"state":{"é":"\u00e9\/\n"}},"timestamp":1795000000}}"#,
        #"{"data":{"content":{"state":"# + String(repeating: "[", count: 505) + String(repeating: "]", count: 505)
            + #"}},"timestamp":1795000000}}"#,
        #"{"data":{"content":{"state":{"a":"# + String(repeating: "[", count: 505) + String(repeating: "]", count: 505)
            + #"}},"timestamp":1795000000}}"#,
        #"{"data":{"content":{"state":null},"timestamp":1795000000}}"#,
        #"{"data":{"content":{"state":[]},"timestamp":1795000000}}"#,
        #"{"data":{"content":{"state":{}},"timestamp":1795000000}} "#,
        #"{"data":{"content":{"state":{}},"timestamp":1795000000}}}"#,
    ])
    func keysAndDepths(payload: String) {
        Self.check(Array(payload.utf8), type: "update", stream: "activity:A1", payload)
    }

    /// The decoder asks for no object below `JSONObjectText.indexedDepth`; one that is asked for is listed then, in
    /// place, and reads as the tree does.
    @Test("objects deeper than the listed levels are listed when asked for and read as the tree reads them", arguments: [
        #"{"a":{"b":{"c":{"d":{"e":{"f":[1,{"g":2}],"h":"x"}}}}}}"#,
        #" { "a" : { "b" :{"c": {"\u0064" :{ "e" : { "f":[1, {"g":2}] , "h" : "\u00e9" } , "i":null}}}} } "#,
        #"{"a":{"b":{"c":{"d":{},"d":{"e":1}}}}}"#,
    ])
    func deeperObjects(text: String) throws {
        let bytes = Array(text.utf8)
        let tree = try JSONParser.parse(text)
        try bytes.withUnsafeBufferPointer { buffer in
            let top = try #require(JSONObjectText.whole(buffer))
            var object = top
            var value = tree
            for key in ["a", "b", "c", "d", "e"] {
                guard case .object(let members) = value else { Issue.record("\(key)'s parent is not an object"); return }
                guard let next = members[key] else {
                    // A repeated key means its first value ({} in the third text), in place as in the tree.
                    #expect(object.member(key) == nil, "\(key)")
                    return
                }
                let member = try #require(object.member(key), "\(key)")
                #expect(try object.value(member) == next, "\(key)")
                value = next
                guard let inner = object.object(member) else {
                    #expect(key == "d", "\(key) is an object in the tree")
                    return
                }
                object = inner
            }
            for key in ["f", "h", "i"] {
                guard case .object(let members) = value else { return }
                #expect(try object.member(key).map { try object.value($0) } == members[key], "\(key)")
            }
        }
    }

    /// `compact`: the text is exactly what the writer writes (then it is hashed as it is; otherwise its parse is).
    @Test("a state's hash is the writer's form's, whether its stored text is compact or not", arguments: [
        (#"{"a":1,"b":"x"}"#, true), (#"{"a": 1}"#, false), (#"{"a":"\u00e9"}"#, false), (#"{"a":"\/"}"#, false),
        (#"{"a":"\n"}"#, true), (#"{"a":"é\u0001"}"#, true), (#"{"a":"\u001F"}"#, false), (#"{"a":"\u000a"}"#, false),
        (#"{"a":1.50,"b":-0.0,"c":1E3}"#, true),
    ])
    func hashes(state: String, compact: Bool) throws {
        let payload = Array(#"{"data":{"content":{"state":\#(state)},"timestamp":1795000000}}"#.utf8)
        let event = try EventCodec.decodePayload(payload, id: "e", stream: "activity:A1", type: "update", at: Self.at)
        let content = try #require(event.contents.first)
        let parsed = try JSONParser.parse(state)
        #expect(content.contentHash == ActivityContent.hash(of: parsed))
        #expect(content.encodedStateSize == parsed.compactSize)
        #expect((content.storedState.compactBytes == Array(state.utf8)) == compact)
        #expect(content.state == parsed)
    }

    @Test("randomly damaged payloads get the tree's verdict in place")
    func damagedPayloads() throws {
        var random = SeededRandom(seed: 77)
        var samples = try RandomWorkload(seed: 22, activities: 6, eventsPerActivity: 30).lines().map { line in
            let event = try EventCodec.decode(line)
            return (EventCodec.encodePayload(event), event.type.rawValue, event.stream.description)
        }
        samples += OddPayloads.valid.map { (Array($0.payload.utf8), $0.type, $0.stream) }
        var decoded = 0
        var refused = 0
        for round in 0..<20_000 {
            var (payload, type, stream) = samples[round % samples.count]
            RandomDamage.damage(&payload, using: &random)
            if Self.check(payload, type: type, stream: stream, String(decoding: payload, as: UTF8.self)) {
                decoded += 1
            } else {
                refused += 1
            }
        }
        #expect(decoded > 1_000)
        #expect(refused > 1_000)
    }
}

extension LedgerEvent {
    /// The contents the event carries (a request's, an update's, an end's).
    var contents: [ActivityContent] {
        switch data {
        case .request(let request): [request.content]
        case .update(let update): [update.content]
        case .end(let end): end.content.map { [$0] } ?? []
        default: []
        }
    }
}
