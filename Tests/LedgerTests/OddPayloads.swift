import LedgerTesting

/// A stored payload with the row's type and stream, for the projection decoder's tests.
struct OddPayload: Sendable, CustomStringConvertible {
    var type: String
    var stream: String
    var payload: String

    init(_ type: String, _ payload: String, stream: String = "activity:A1") {
        self.type = type
        self.stream = stream
        self.payload = payload
    }

    var description: String { "\(type) \(payload)" }
}

/// Payloads off the beaten path: escapes, unicode, number forms, nulls, whitespace, channel events.
enum OddPayloads {
    static let state = #"{"eta":1e3,"name":"caf\u00e9 \"x\" \/ \ud83d\ude00","nested":[{"a":null},true,false,-0.5E-2,[]]}"#

    /// The full decoder accepts these; the fast path must decide them itself.
    static let valid: [OddPayload] = [
        OddPayload("request", #"{"source":"app","data":{"attributesType":"Ride","attributes":{"k":[1,2]},"content":{"state":\#(state),"staleDate":"2026-11-20T22:14:03+01:00","relevanceScore":0.5},"pushType":"token","style":"standard","scheduledStart":1795000100.25,"origin":"pushToStart","installation":"inst-é"}}"#),
        OddPayload("request", #" { "data" : { "attributesType" : "Ride" , "attributes" : { } , "content" : { "state" : { } } , "pushType" : { "channel" : "ch-1" , "x" : 1 } , "installation" : "" } , "extra" : [ ] } "#),
        OddPayload("request", #"{"data":{"attributesType":"Ride","attributes":{},"content":{"state":{},"staleDate":null,"relevanceScore":null},"pushType":null,"style":null,"scheduledStart":null,"origin":null,"installation":null},"source":null}"#),
        OddPayload("request", #"{"data":{"attributesType":"Ride","attributes":{},"content":{"state":{"a":1,"a":2}},"pushType":"none","unknown":{"\u0041":"\n"}}}"#),
        OddPayload("token", #"{"source":"app","data":{"token":"00ABCdef99","environment":"sandbox"}}"#),
        OddPayload("token", #"{"data":{"token":"ab","environment":null}}"#),
        OddPayload("startToken", #"{"data":{"token":"cafe01"}}"#, stream: "installation:I-1"),
        OddPayload("update", #"{"data":{"content":{"state":\#(state),"staleDate":1795000000},"timestamp":1795000000.0,"alert":{"title":"T","body":{"loc-key":"K"},"sound":"default"},"priority":5}}"#),
        OddPayload("update", #"{"data":{"content":{"state":{"x":"\u0000\u001f\t"}},"timestamp":1.795e9,"alert":null,"priority":null}}"#),
        OddPayload("update", #"{"data":{"content":{"state":{"p":1}},"timestamp":-5,"priority":10}}"#, stream: "channel:ch-1"),
        OddPayload("end", #"{"source":"app","data":{"content":{"state":{"done":true}},"timestamp":1795000000,"dismissalPolicy":{"after":"2026-11-20T21:14:03.250Z"}}}"#),
        OddPayload("end", #"{"data":{"content":null,"timestamp":99999999999999,"dismissalPolicy":"immediate"}}"#),
        OddPayload("end", #"{"data":{"timestamp":1795000000,"dismissalPolicy":"default"}}"#, stream: "channel:ch-1"),
        OddPayload("end", #"{"data":{"timestamp":1795000000,"dismissalPolicy":{"after":1795000000}}}"#),
        OddPayload("dismiss", #"{"source":"device","data":{"by":"system"}}"#),
        OddPayload("push", #"{"source":"apns","data":{"refersTo":"u-1","status":410,"reason":"Unregistered","apnsId":"x","token":"ab12","channel":null,"priority":10,"apnsTimestamp":1795000000123}}"#),
        OddPayload("push", #"{"data":{"refersTo":"u-1","status":410,"token":"ab12","apnsTimestamp":"2026-11-20T21:14:03Z"}}"#),
        OddPayload("push", #"{"data":{"refersTo":"u-1","status":200.0,"apnsTimestamp":null}}"#, stream: "channel:ch-1"),
        OddPayload("observe", #"{"source":"device","data":{"activityState":"stale","contentTimestamp":1795000000,"contentHash":"abc"}}"#),
        OddPayload("subscribe", #"{"data":{"activity":"activity:A2"}}"#, stream: "channel:ch-1"),
        OddPayload("subscribe", #"{"data":{"activity":"A3"}}"#, stream: "channel:ch-1"),
        OddPayload("subscribe", #"{"data":{"activity":"activity:"}}"#, stream: "channel:ch-1"),
        OddPayload("reconcile", #"{"source":"ledger","data":{"run":"r1","action":"endDuplicate","reason":null,"finding":"f"}}"#),
    ]

    /// Invalid payloads (the full decoder refuses them) and valid ones the fast path does not handle itself.
    static let deferred: [OddPayload] = [
        OddPayload("request", #"{"data":{"attributesType":"Ride","attributes":[],"content":{"state":{}}}}"#),
        OddPayload("request", #"{"data":{"attributesType":"","attributes":{},"content":{"state":{}}}}"#),
        OddPayload("request", #"{"data":{"attributesType":"Ride","attributes":{},"content":{"state":[]}}}"#),
        OddPayload("request", #"{"data":{"attributesType":"Ride","attributes":{},"content":{"state":{}},"pushType":"both"}}"#),
        OddPayload("request", #"{"data":{"attributesType":"Ride","attributes":{},"content":{"state":{}},"style":"big"}}"#),
        OddPayload("request", #"{"data":{"attributesType":"Ride","attributes":{},"content":{"state":{}},"scheduledStart":"tomorrow"}}"#),
        OddPayload("request", #"{"data":{"attributesType":"Ride","attributes":{},"content":{"state":{},"relevanceScore":"high"}}}"#),
        OddPayload("request", #"{"data":{"attributesType":"Ride","attributes":{},"content":{"state":{"s":"\x"}}}}"#),
        OddPayload("request", #"{"data":{"attributesType":"Ride","attributes":{},"content":{"state":{"s":"\ud83d"}}}}"#),
        OddPayload("request", #"{"data":{"attributesType":"Ride","attributes":{},"content":{"state":{"n":01}}}}"#),
        OddPayload("request", #"{"data":{"attributesType":"Ride","attributes":{},"content":{"state":{}}}} x"#),
        OddPayload("request", #"{"data":{"attributesType":"R\u0069de","attributes":{},"content":{"state":{}}}}"#),
        OddPayload("request", #"{"data":{"attributes\u0054ype":"Ride","attributes":{},"content":{"state":{}}}}"#),
        OddPayload("token", #"{"data":{"token":"xyz"}}"#),
        OddPayload("token", #"{"data":{"token":"ab","token":"cd"}}"#),
        OddPayload("token", #"{"data":{"token":"ab","environment":"test"}}"#),
        OddPayload("update", #"{"data":{"content":{"state":{}},"timestamp":1.5}}"#),
        OddPayload("update", #"{"data":{"content":{"state":{}},"timestamp":1795000000,"priority":7}}"#),
        OddPayload("update", #"{"data":{"content":{"state":{}},"timestamp":1795000000,"alert":{"title":3}}}"#),
        OddPayload("update", #"{"data":{"content":{"state":{}}}}"#),
        OddPayload("end", #"{"data":{"timestamp":1795000000,"dismissalPolicy":{"before":1}}}"#),
        OddPayload("dismiss", #"{"data":{"by":"nobody"}}"#),
        OddPayload("dismiss", #"{"data":null}"#),
        OddPayload("push", #"{"data":{"refersTo":"u-1","status":700}}"#),
        OddPayload("push", #"{"data":{"refersTo":"u-1","status":410,"apnsTimestamp":true}}"#),
        OddPayload("observe", #"{"data":{"activityState":"gone"}}"#),
        OddPayload("subscribe", #"{"data":{"activity":""}}"#, stream: "channel:ch-1"),
        OddPayload("reconcile", #"{"data":{"run":"r1","action":"panic"}}"#),
        OddPayload("launch", #"{"data":{}}"#),
        OddPayload("dismiss", #"{"data":{"by":"user"}}"#, stream: "activity"),
        OddPayload("dismiss", #"{"source":"nobody","data":{"by":"user"}}"#),
        OddPayload("dismiss", #"[]"#),
        OddPayload("dismiss", "{\"data\":{\"by\":\"user\",\"x\":\"\u{1}\"}}"),
    ]
}

/// Random damage for the decoders' agreement tests: one to three bytes of JSON's alphabet (and bytes that break
/// UTF-8) replaced, inserted or removed.
enum RandomDamage {
    static let alphabet =
        Array(#"{}[]":,\ 0123456789.eE+-ntrufal"u\é"#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xED, 0xF4, 0xFF]

    static func damage(_ bytes: inout [UInt8], using random: inout SeededRandom) {
        for _ in 0...Int.random(in: 0..<3, using: &random) {
            guard !bytes.isEmpty else { return }
            let at = Int.random(in: 0..<bytes.count, using: &random)
            let byte = alphabet.randomElement(using: &random)!
            switch Int.random(in: 0..<3, using: &random) {
            case 0: bytes[at] = byte
            case 1: bytes.insert(byte, at: at)
            default: bytes.remove(at: at)
            }
        }
    }
}
