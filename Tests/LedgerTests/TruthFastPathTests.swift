import ActivityModel
@testable import Ledger
import LedgerTesting
import Testing

/// The nightly job reads plain truth lines without a tree (`TruthItem.scanned`, `CanonicalJSON.consumeCanonical`)
/// and every other line in full. Both must give the same item, canonical state and hash, or the same invalid line.
@Suite("Nightly: truth lines read without a tree")
struct TruthFastPathTests {
    static func parsed(_ line: String, number: Int = 1) -> (fast: TruthSpool.Parsed, full: TruthSpool.Parsed, scanned: Bool) {
        let bytes = Array(line.utf8)
        return bytes.withUnsafeBufferPointer { buffer in
            (
                TruthSpool.Parsed(number: number, bytes: buffer), TruthSpool.Parsed(parsing: buffer, number: number),
                TruthItem.scanned(buffer, number: number) != nil
            )
        }
    }

    @Test("plain lines are read without a tree and agree with the full parse", arguments: [
        #"{"activity":"A0000001","state":{"eta":2},"done":false}"#,
        #"{"activity":"ride-7","state":{"a":[1,"x",true,null],"b":{"c":-12,"d":"é"}},"done":true,"at":"2026-11-20T21:00:00Z"}"#,
        #" { "done" : null , "activity" : "Zürich-1" , "at" : 1763672400 , "state" : {"plain":true} } "#,
        #"{"activity":"A","state":null,"extra":[1,{"k":2.5e3}],"x":"\n"}"#,
        #"{"activity":"A","state":{},"at":null}"#,
        #"{"activity":"A","state":{"":1,"A":2,"a":3,"ab":4,"b":5}}"#,
    ])
    func plainLines(_ line: String) {
        let (fast, full, scanned) = Self.parsed(line)
        #expect(scanned, "left to the full parse: \(line)")
        #expect(fast == full, "\(line)")
    }

    @Test("lines that may not be plain are left to the full parse, which decides them", arguments: [
        #"{"activity":"A","state":{"b":1,"a":2}}"#,  // keys out of order
        #"{"activity":"A","state":{"a":1,"a":2}}"#,  // a repeated key
        #"{"activity":"A","state":{"a": 1}}"#,  // whitespace
        #"{"activity":"A","state":{"a":1.0}}"#, #"{"activity":"A","state":{"a":-0}}"#, #"{"activity":"A","state":1e2}"#,
        #"{"activity":"A","state":12345678901234567890}"#,
        #"{"activity":"A","state":[]}"#, #"{"activity":"A","state":0}"#,  // a state must be an object
        #"{"activity":"A","state":"a\nb"}"#, #"{"activity":"A","state":{"é":1}}"#,
        #"{"activity":"A\u0042","state":1}"#, #"{"activity":"A","activity":"B"}"#, #"{"\u0061ctivity":"A"}"#,
        #"{"activity":"A","done":"yes"}"#, #"{"activity":"A","at":"yesterday"}"#, #"{"activity":"A","at":{}}"#,
        #"{"activity":"","state":1}"#, #"{"activity":7}"#, #"{"state":1}"#, #"[1]"#, #"{"activity":"A""#, #"{}"#,
        #"{"activity":"A"} x"#, #"{"activity":"A\u0001"}"#,
    ])
    func deferredLines(_ line: String) {
        let (fast, full, scanned) = Self.parsed(line)
        #expect(!scanned, "read without a tree: \(line)")
        #expect(fast == full, "\(line)")
    }

    /// Lines built from canonical and non-canonical pieces, in any order, sometimes repeated, spaced or cut short.
    @Test("generated lines: the same answer either way")
    func generatedLines() {
        var random = SeededRandom(seed: 2026)
        func pick(_ items: [String]) -> String { items[Int(random.next() % UInt64(items.count))] }
        let keys = ["a", "b", "B", "ab", "", "z", "é", "e\u{301}", "a\\u0062"]
        func value(depth: Int) -> String {
            switch random.next() % (depth > 2 ? 3 : 5) {
            case 0: return pick(["0", "-0", "5", "-12", "1.0", "1e2", "12345678901234567890", "3.25", "007"])
            case 1: return pick([#""x""#, #""é""#, #""a\nb""#, #""\u00e9""#, "true", "false", "null", #""""#])
            case 2: return pick(["[]", "{}", "nul", #""open"#])
            case 3: return "[" + (0..<Int(random.next() % 3)).map { _ in value(depth: depth + 1) }.joined(separator: pick([",", ", "])) + "]"
            default: return object(depth: depth)
            }
        }
        func object(depth: Int) -> String {
            var members = (0..<Int(random.next() % 4)).map { _ in pick(keys) }
            if random.next() % 2 == 0 { members.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) } }
            return "{" + members.map { #""\#($0)":"# + value(depth: depth + 1) }.joined(separator: pick([",", ",", " ,"])) + "}"
        }
        var scannedCount = 0
        for number in 1...3_000 {
            var fields: [String] = []
            if random.next() % 10 > 0 { fields.append(#""activity":"# + pick([#""A1""#, #""ride-7""#, #""é-x""#, #""""#, #""A\u0042""#, "7", "null"])) }
            // Mostly objects, as states are; sometimes anything, which the full parse refuses.
            if random.next() % 4 > 0 { fields.append(#""state":"# + (random.next() % 4 > 0 ? object(depth: 0) : value(depth: 0))) }
            if random.next() % 2 == 0 { fields.append(#""done":"# + pick(["true", "false", "null", #""yes""#, "1"])) }
            if random.next() % 2 == 0 {
                fields.append(#""at":"# + pick([#""2026-11-20T21:00:00Z""#, "1763672400", "1763672400.5", #""bad""#, "null", "{}"]))
            }
            if random.next() % 4 == 0 { fields.append(pick([#""x":[1,2]"#, #""activity2":1"#, #""\u0061t":5"#, #""é":1"#])) }
            if random.next() % 8 == 0, let repeated = fields.randomElement(using: &random) { fields.append(repeated) }
            fields.shuffle(using: &random)
            var line = pick(["", " "]) + "{" + fields.joined(separator: pick([",", " , "])) + "}" + pick(["", " "])
            if random.next() % 20 == 0 { line.removeLast() }
            let (fast, full, scanned) = Self.parsed(line, number: number)
            if scanned { scannedCount += 1 }
            #expect(fast == full, "\(line)")
        }
        // Enough of the generated lines are plain for the comparison to cover the fast path.
        #expect(scannedCount > 300, "only \(scannedCount) generated lines were read without a tree")
    }
}
