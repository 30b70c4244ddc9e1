import ActivityModel
import Foundation
@testable import Ledger
import LedgerStore
import LedgerTesting
import Testing

/// Strings are stored exactly or refused: arbitrary Unicode through every string field of every event type,
/// written as JSON escapes and as raw UTF-8, imported line by line. A line is refused exactly when a name (id,
/// stream id, installation, channel, subscribed activity) holds a control character or is not in Unicode NFC, or
/// any string holds a lone surrogate escape; everything accepted exports, re-imports and exports again byte for
/// byte, and both files verify.
@Suite("Unicode: stored exactly or refused")
struct UnicodeRoundTripTests {
    struct Generator {
        var random: SeededRandom
        mutating func below(_ n: Int) -> Int { Int.random(in: 0..<n, using: &random) }

        /// A JSON string literal (quotes included) and whether it holds a control character or a lone surrogate.
        mutating func string(allowEmpty: Bool = false) -> (json: String, control: Bool, surrogate: Bool) {
            var json = "\""
            var control = false
            var surrogate = false
            let length = allowEmpty ? below(6) : 1 + below(6)
            for _ in 0..<length {
                switch below(40) {
                case 0: let c = below(32); control = true; json += String(format: "\\u%04x", c)
                case 1: json += "\\u2028"
                case 2: json += "\u{2029}"
                case 3: surrogate = true; json += ["\\ud800x", "x\\udfff", "\\ud83d x"][below(3)]
                case 4: json += "\\ud83d\\ude00"  // a valid pair: 😀
                case 5: json += "\u{301}"  // a combining mark, maybe first
                case 6: json += ["\\\"", "\\\\", "\\/", "/"][below(4)]
                case 7: json += "\u{7F}"; control = true
                case 8: json += "é漢字"
                case 9: json += "\u{FEFF}"
                default: json += String(UnicodeScalar(UInt8(97 + below(26))))
                }
            }
            return (json + "\"", control, surrogate)
        }
    }

    /// One random event line and whether the ledger must refuse it.
    static func line(_ g: inout Generator, index: Int) -> (String, Bool) {
        var refuse = false
        func name() -> String {
            let s = g.string()
            // A name must be in NFC too (`Identifier`): a letter then U+0301 composes, so it is refused.
            let nfc = (try? JSONParser.parse(Array(s.json.utf8)))?.stringValue.map(Identifier.isNFC) ?? true
            refuse = refuse || s.control || s.surrogate || !nfc
            return s.json
        }
        func text() -> String {
            let s = g.string(allowEmpty: true)
            refuse = refuse || s.surrogate
            return s.json
        }
        let activity = name()
        let id = name()
        func content() -> String { #"{"state":{\#(text()):\#(text()),"_n":\#(g.below(100))}}"# }
        let data: String
        let stream: String
        let type: String
        switch g.below(5) {
        case 0:
            type = "request"
            stream = activity
            // An attributes type is a name (session 26): control characters and other forms than NFC are refused.
            data = #"{"attributesType":\#(name()),"attributes":{\#(text()):\#(text())},"content":\#(content()),"pushType":{"channel":\#(name())},"installation":\#(name())}"#
        case 1:
            type = "update"
            stream = activity
            data = #"{"content":\#(content()),"timestamp":1795208400,"alert":{"title":\#(text()),"body":\#(text())}}"#
        case 2:
            type = "subscribe"
            stream = "channel"
            data = #"{"activity":\#(name())}"#
        case 3:
            type = "push"
            stream = activity
            data = #"{"refersTo":\#(name()),"status":410,"reason":\#(text()),"apnsId":\#(text())}"#
        default:
            type = "reconcile"
            stream = activity
            data = #"{"run":\#(name()),"action":"none","reason":\#(text()),"finding":\#(text())}"#
        }
        let kind = stream == "channel" ? "channel" : "activity"
        // Unicode scalars, not Characters: a combining mark first would fuse with the quote.
        let streamJSON = "\"\(kind):" + String(activity.unicodeScalars.dropFirst())
        let idJSON = "\"\(index)-" + String(id.unicodeScalars.dropFirst())  // unique: no conflicts between lines
        return (#"{"id":\#(idJSON),"stream":\#(streamJSON),"type":"\#(type)","at":\#(1_795_208_400 + index),"data":\#(data)}"#, refuse)
    }

    @Test("arbitrary Unicode in every field: refused exactly when it must be; export → import → export is byte-identical", arguments: [1, 2, 3])
    func roundTrip(seed: UInt64) async throws {
        let first = try TemporaryLedger()
        var g = Generator(random: SeededRandom(seed: seed))
        var accepted = 0
        for index in 0..<300 {
            let (line, mustRefuse) = Self.line(&g, index: index)
            let path = try first.write(line + "\n", to: "line.jsonl")
            do {
                _ = try await first.ledger.importJSONLines(try JSONLinesReader(path: path))
                #expect(!mustRefuse, "accepted a line it must refuse: \(line)")
                accepted += 1
            } catch let error as LedgerError {
                #expect(mustRefuse, "refused a valid line: \(line): \(error)")
                #expect(error.line == 1)
            }
        }
        #expect(accepted > 20)
        let exported = try await Self.export(first.ledger)
        let second = try TemporaryLedger()
        _ = try await second.ledger.importJSONLines(try JSONLinesReader(path: try second.write(exported, to: "all.jsonl")))
        #expect(try await Self.export(second.ledger) == exported)
        #expect(try first.ledger.store.verify().ok)
        #expect(try second.ledger.store.verify().ok)
    }

    static func export(_ ledger: Ledger) async throws -> String {
        var out: [UInt8] = []
        try await ledger.exportLines { line, _ in
            out += line + [0x0A]
            return true
        }
        return String(decoding: out, as: UTF8.self)
    }
}
