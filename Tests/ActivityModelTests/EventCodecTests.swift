import ActivityModel
import Testing

@Suite("Event codec")
struct EventCodecTests {
    static let valid =
        #"{"id":"u1","stream":"activity:RIDE-1","type":"update","at":"2026-11-20T21:14:03.250Z","source":"server","data":{"content":{"state":{"eta":5},"staleDate":"2026-11-20T22:00:00.000Z","relevanceScore":80},"timestamp":1795209243,"alert":{"title":"Hi","body":"There","sound":"default"},"priority":10}}"#

    @Test("a valid update decodes and re-encodes to the same compact JSON")
    func roundTrip() throws {
        let event = try EventCodec.decode(Self.valid)
        #expect(event.type == .update)
        #expect(event.stream == .activity("RIDE-1"))
        #expect(event.at.rfc3339 == "2026-11-20T21:14:03.250Z")
        guard case .update(let update) = event.data else { Issue.record("not an update"); return }
        #expect(update.timestamp == 1_795_209_243)
        #expect(update.content.relevanceScore == 80)
        #expect(update.content.encodedStateSize == #"{"eta":5}"#.utf8.count)
        #expect(String(decoding: EventCodec.encode(event), as: UTF8.self) == Self.valid)
    }

    @Test("the storage payload round-trips with the row's columns")
    func payloadRoundTrip() throws {
        let event = try EventCodec.decode(Self.valid)
        let payload = EventCodec.encodePayload(event)
        #expect(String(decoding: payload, as: UTF8.self).hasPrefix(#"{"source":"server","data":{"#))
        let back = try EventCodec.decodePayload(
            payload, id: "u1", stream: "activity:RIDE-1", type: "update", at: event.at)
        #expect(back == event)
    }

    @Test("every event type round-trips through encode and decode")
    func everyTypeRoundTrips() throws {
        for line in Self.everyTypeLines {
            let event = try EventCodec.decode(line)
            #expect(String(decoding: EventCodec.encode(event), as: UTF8.self) == line)
        }
    }

    static let everyTypeLines = [
        #"{"id":"r","stream":"activity:A","type":"request","at":"2026-11-20T20:00:00.000Z","source":"app","data":{"attributesType":"RideAttributes","attributes":{"rider":"J"},"content":{"state":{"s":1}},"pushType":{"channel":"C"},"style":"transient","scheduledStart":"2026-11-20T21:00:00.000Z","origin":"pushToStart","installation":"I1"}}"#,
        #"{"id":"t","stream":"activity:A","type":"token","at":"2026-11-20T20:00:00.000Z","source":"app","data":{"token":"ab12","environment":"sandbox"}}"#,
        #"{"id":"st","stream":"installation:I1","type":"startToken","at":"2026-11-20T20:00:00.000Z","source":"app","data":{"token":"ff00"}}"#,
        #"{"id":"e","stream":"channel:C","type":"end","at":"2026-11-20T20:00:00.000Z","source":"server","data":{"timestamp":1795204800,"dismissalPolicy":{"after":"2026-11-20T21:00:00.000Z"}}}"#,
        #"{"id":"d","stream":"activity:A","type":"dismiss","at":"2026-11-20T20:00:00.000Z","source":"app","data":{"by":"user"}}"#,
        #"{"id":"p","stream":"activity:A","type":"push","at":"2026-11-20T20:00:00.000Z","source":"apns","data":{"refersTo":"u1","status":410,"reason":"Unregistered","apnsId":"X","token":"ab12","priority":5,"apnsTimestamp":"2026-11-20T19:00:00.000Z"}}"#,
        #"{"id":"o","stream":"activity:A","type":"observe","at":"2026-11-20T20:00:00.000Z","source":"device","data":{"activityState":"stale","contentTimestamp":1795204800,"contentHash":"abc"}}"#,
        #"{"id":"s","stream":"channel:C","type":"subscribe","at":"2026-11-20T20:00:00.000Z","source":"server","data":{"activity":"A"}}"#,
        #"{"id":"k","stream":"activity:A","type":"reconcile","at":"2026-11-20T20:00:00.000Z","source":"ledger","data":{"run":"nightly-1","action":"end","reason":"leaked","finding":"leaked"}}"#,
    ]

    @Test("the storage payload written straight to bytes is the tree's bytes, for every scenario event")
    func payloadBytesAreTheTrees() throws {
        var events = try Self.everyTypeLines.map { try EventCodec.decode($0) }
        events += try Scenario.names.flatMap { try Scenario.load($0).events.map(\.event) }
        #expect(events.count > 100)
        for event in events {
            let tree: JSONValue = .object([
                "source": .string(event.source.rawValue), "data": EventCodec.dataJSON(event.data),
            ])
            #expect(EventCodec.encodePayload(event) == tree.compactBytes, "\(event.type) \(event.id ?? "")")
        }
    }

    @Test("an interchange problem deep inside is named by its whole path", arguments: [
        (#"{"a":[{"b":1},{"c":{"d":1,"d":2}}]}"#, "x.a[1].c.d", "a[1].c.d"),
        (#"{"a":[[1,2,1e400]]}"#, "x.a[0][2]", "a[0][2]"),
        (#"[{"k":1,"k":1}]"#, "x[0].k", "[0].k"),
        (#"{"[0]":{"e":1e999}}"#, "x.[0].e", "[0].e"),
        (#"{"ok":[1,{"deep":[true,null,"s",-0.0]}]}"#, nil, nil),
    ])
    func interchangePaths(json: String, underX: String?, alone: String?) throws {
        let value = try JSONParser.parse(json)
        #expect(value.firstInterchangeProblem(path: "x")?.field == underX)
        #expect(value.firstInterchangeProblem()?.field == alone)
    }

    @Test("source defaults to server, Unix seconds are accepted for times, null optional fields are absent")
    func defaults() throws {
        let event = try EventCodec.decode(
            #"{"stream":"activity:A","type":"dismiss","at":1795204800.5,"data":{"by":"system"},"id":null}"#)
        #expect(event.source == .server)
        #expect(event.id == nil)
        #expect(event.at == Instant(milliseconds: 1_795_204_800_500))
    }

    @Test("push apnsTimestamp as a number is Unix milliseconds")
    func apnsTimestampMilliseconds() throws {
        let event = try EventCodec.decode(
            #"{"stream":"activity:A","type":"push","at":"2026-11-20T20:00:00Z","data":{"refersTo":"u1","status":410,"apnsTimestamp":1795204800123}}"#)
        guard case .push(let push) = event.data else { Issue.record("not a push"); return }
        #expect(push.apnsTimestamp == Instant(milliseconds: 1_795_204_800_123))
    }

    struct Refusal: Sendable, CustomStringConvertible {
        var name: String
        var json: String
        var code: EventDecodingError.Code
        var field: String
        var description: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(name: "malformed JSON", json: #"{"stream":"activity:A","#, code: .malformedJSON, field: ""),
        Refusal(name: "not an object", json: #"[1,2]"#, code: .wrongType, field: "$"),
        Refusal(
            name: "unknown type", json: #"{"stream":"activity:A","type":"explode","at":"2026-11-20T20:00:00Z","data":{}}"#,
            code: .unknownType, field: "type"),
        Refusal(
            name: "missing type", json: #"{"stream":"activity:A","at":"2026-11-20T20:00:00Z","data":{}}"#,
            code: .missingField, field: "type"),
        Refusal(
            name: "missing stream", json: #"{"type":"dismiss","at":"2026-11-20T20:00:00Z","data":{"by":"user"}}"#,
            code: .missingField, field: "stream"),
        Refusal(
            name: "missing at", json: #"{"stream":"activity:A","type":"dismiss","data":{"by":"user"}}"#,
            code: .missingField, field: "at"),
        Refusal(
            name: "missing data", json: #"{"stream":"activity:A","type":"dismiss","at":"2026-11-20T20:00:00Z"}"#,
            code: .missingField, field: "data"),
        Refusal(
            name: "missing nested required field",
            json: #"{"stream":"activity:A","type":"update","at":"2026-11-20T20:00:00Z","data":{"content":{"staleDate":1},"timestamp":1}}"#,
            code: .missingField, field: "data.content.state"),
        Refusal(
            name: "wrong type of content-state",
            json: #"{"stream":"activity:A","type":"update","at":"2026-11-20T20:00:00Z","data":{"content":{"state":"x"},"timestamp":1}}"#,
            code: .wrongType, field: "data.content.state"),
        Refusal(
            name: "fractional update timestamp",
            json: #"{"stream":"activity:A","type":"update","at":"2026-11-20T20:00:00Z","data":{"content":{"state":{}},"timestamp":1.5}}"#,
            code: .wrongType, field: "data.timestamp"),
        Refusal(
            name: "unparseable time", json: #"{"stream":"activity:A","type":"dismiss","at":"yesterday","data":{"by":"user"}}"#,
            code: .wrongType, field: "at"),
        Refusal(
            name: "unknown source",
            json: #"{"stream":"activity:A","type":"dismiss","at":"2026-11-20T20:00:00Z","source":"phone","data":{"by":"user"}}"#,
            code: .unknownValue, field: "source"),
        Refusal(
            name: "unknown phase",
            json: #"{"stream":"activity:A","type":"observe","at":"2026-11-20T20:00:00Z","data":{"activityState":"sleeping"}}"#,
            code: .unknownValue, field: "data.activityState"),
        Refusal(
            name: "unknown dismissal policy",
            json: #"{"stream":"activity:A","type":"end","at":"2026-11-20T20:00:00Z","data":{"timestamp":1,"dismissalPolicy":"later"}}"#,
            code: .unknownValue, field: "data.dismissalPolicy"),
        Refusal(
            name: "unknown priority",
            json: #"{"stream":"activity:A","type":"update","at":"2026-11-20T20:00:00Z","data":{"content":{"state":{}},"timestamp":1,"priority":7}}"#,
            code: .unknownValue, field: "data.priority"),
        Refusal(
            name: "unknown pushType",
            json: #"{"stream":"activity:A","type":"request","at":"2026-11-20T20:00:00Z","data":{"attributesType":"T","attributes":{},"content":{"state":{}},"pushType":"email"}}"#,
            code: .unknownValue, field: "data.pushType"),
        Refusal(
            name: "stream that does not fit the type",
            json: #"{"stream":"channel:C","type":"request","at":"2026-11-20T20:00:00Z","data":{}}"#,
            code: .streamMismatch, field: "stream"),
        Refusal(
            name: "startToken on an activity stream",
            json: #"{"stream":"activity:A","type":"startToken","at":"2026-11-20T20:00:00Z","data":{"token":"ab"}}"#,
            code: .streamMismatch, field: "stream"),
        Refusal(
            name: "unknown stream kind",
            json: #"{"stream":"device:A","type":"dismiss","at":"2026-11-20T20:00:00Z","data":{"by":"user"}}"#,
            code: .wrongType, field: "stream"),
        Refusal(
            name: "token that is not hex",
            json: #"{"stream":"activity:A","type":"token","at":"2026-11-20T20:00:00Z","data":{"token":"xyz"}}"#,
            code: .wrongType, field: "data.token"),
        Refusal(
            name: "status that is not a number",
            json: #"{"stream":"activity:A","type":"push","at":"2026-11-20T20:00:00Z","data":{"refersTo":"u","status":"200"}}"#,
            code: .wrongType, field: "data.status"),
    ]

    @Test("refusals name the field and what was expected", arguments: refusals)
    func refusal(_ refusal: Refusal) {
        do {
            let event = try EventCodec.decode(refusal.json)
            Issue.record("accepted \(event)")
        } catch {
            #expect(error.code == refusal.code, "\(error)")
            #expect(error.field == refusal.field, "\(error)")
            #expect(!error.description.isEmpty)
        }
    }

    @Test("refusal messages read well")
    func message() {
        do {
            _ = try EventCodec.decode(
                #"{"stream":"activity:A","type":"update","at":"2026-11-20T20:00:00Z","data":{"content":{"state":"x"},"timestamp":1}}"#)
        } catch {
            #expect(error.description == "field 'data.content.state': expected an object, got a string")
        }
        do {
            _ = try EventCodec.decode(#"{"stream":"channel:C","type":"request","at":"2026-11-20T20:00:00Z","data":{}}"#)
            Issue.record("a request on a channel stream decoded")
        } catch {
            #expect(error.description.contains("an activity:<id> stream for a request event"), "\(error.description)")
        }
        do {
            _ = try EventCodec.decode(
                #"{"stream":"activity:A","type":"update","at":0,"data":{"content":{"state":{},"relevanceScore":1e400},"timestamp":1}}"#)
            Issue.record("a relevanceScore of 1e400 decoded")
        } catch {
            #expect(
                error.description
                    == "field 'data.content.relevanceScore': expected a number a double can hold (RFC 7493), got 1e400",
                "\(error.description)")
        }
    }
}

@Suite("Codec robustness")
struct CodecRobustnessTests {
    @Test("mutated and truncated lines never crash the decoder", arguments: 0..<20)
    func mutations(seed: Int) throws {
        var rng = SeededGenerator(seed: UInt64(seed))
        let base = Array(EventCodecTests.valid.utf8)
        for _ in 0..<500 {
            var bytes = base
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let index = Int.random(in: 0..<bytes.count, using: &rng)
                bytes[index] = UInt8.random(in: 0...255, using: &rng)
            }
            if Bool.random(using: &rng) { bytes.removeLast(Int.random(in: 0..<bytes.count, using: &rng)) }
            if let event = try? EventCodec.decode(bytes) {
                // Whatever is accepted re-encodes and decodes to itself.
                #expect(try EventCodec.decode(EventCodec.encode(event)) == event)
            }
        }
    }

    @Test("extreme numbers are refused, not trapped on", arguments: [
        "-9223372036854775808", "9223372036854775807", "1e400", "-1e400", "99999999999999999999",
    ])
    func extremeNumbers(_ number: String) {
        #expect(throws: EventDecodingError.self) {
            try EventCodec.decode(#"{"stream":"activity:A","type":"dismiss","at":\#(number),"data":{"by":"user"}}"#)
        }
        _ = try? EventCodec.decode(
            #"{"stream":"activity:A","type":"push","at":0,"data":{"refersTo":"u","status":410,"apnsTimestamp":\#(number)}}"#)
        _ = try? EventCodec.decode(
            #"{"stream":"activity:A","type":"update","at":0,"data":{"content":{"state":{}},"timestamp":\#(number)}}"#)
        #expect(Instant(milliseconds: .min).rfc3339.count > 0)
        #expect(Instant(milliseconds: .max).seconds > 0)
    }
}

@Test("a stream id that begins with a combining mark reads back as itself")
func streamIDWithCombiningMark() throws {
    let name = StreamName.activity("\u{2CF0}ride")
    #expect(StreamName(name.description) == name)
    let event = try EventCodec.decode(#"{"stream":"activity:\#u{2CF0}ride","type":"dismiss","at":1,"data":{"by":"user"}}"#)
    #expect(event.stream == name)
    let stored = try EventCodec.decodePayload(
        EventCodec.encodePayload(event), id: "x", stream: name.description, type: "dismiss", at: event.at)
    #expect(stored.stream == name)
}
