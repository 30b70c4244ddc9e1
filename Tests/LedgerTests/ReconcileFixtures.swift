import ActivityModel
import Foundation
import Ledger
import LedgerTesting

/// Builds event JSON Lines for reconciliation scenarios. Times are minutes after 2026-11-20T21:00:00Z
/// (Unix 1795208400); content timestamps follow the same clock.
enum ReconcileFixtures {
    static let base: Int64 = 1_795_208_400

    static func time(_ minutes: Int64) -> String { Instant(seconds: base + minutes * 60).rfc3339 }
    static func stamp(_ minutes: Int64) -> Int64 { base + minutes * 60 }
    static func instant(_ minutes: Int64) -> Instant { Instant(seconds: base + minutes * 60) }

    static func request(
        _ id: String, at minutes: Int64 = 0, state: String = #"{"eta":5}"#, installation: String = "I1",
        attributes: String? = nil, type: String = "RideAttributes"
    ) -> String {
        let attributes = attributes ?? #"{"ride":"\#(id)"}"#
        return """
            {"stream":"activity:\(id)","type":"request","at":"\(time(minutes))","data":{"attributesType":"\(type)","attributes":\(attributes),"content":{"state":\(state)},"pushType":"token","installation":"\(installation)"}}
            """
    }

    static func update(_ id: String, at minutes: Int64, state: String, eventID: String? = nil) -> String {
        let idField = eventID.map { #""id":"\#($0)","# } ?? ""
        return """
            {\(idField)"stream":"activity:\(id)","type":"update","at":"\(time(minutes))","data":{"content":{"state":\(state)},"timestamp":\(stamp(minutes))}}
            """
    }

    static func end(_ id: String, at minutes: Int64) -> String {
        """
        {"stream":"activity:\(id)","type":"end","at":"\(time(minutes))","data":{"timestamp":\(stamp(minutes)),"dismissalPolicy":"default"}}
        """
    }

    static func token(_ id: String, at minutes: Int64, token: String) -> String {
        """
        {"stream":"activity:\(id)","type":"token","at":"\(time(minutes))","source":"app","data":{"token":"\(token)"}}
        """
    }

    static func push(_ id: String, at minutes: Int64, refersTo: String, status: Int, reason: String? = nil, token: String)
        -> String
    {
        let reasonField = reason.map { #","reason":"\#($0)""# } ?? ""
        return """
            {"stream":"activity:\(id)","type":"push","at":"\(time(minutes))","source":"apns","data":{"refersTo":"\(refersTo)","status":\(status)\(reasonField),"token":"\(token)"}}
            """
    }

    static func lines(_ parts: String...) -> String { parts.joined(separator: "\n") }

    static func truth(_ id: String, state: String?, done: Bool = false, at minutes: Int64 = 60) -> String {
        let stateField = state.map { #","state":\#($0)"# } ?? ""
        return #"{"activity":"\#(id)"\#(stateField),"done":\#(done),"at":"\#(time(minutes))"}"#
    }

    static func reader(_ text: String, in temp: TemporaryLedger, name: String = "truth.jsonl") throws -> JSONLinesReader {
        try JSONLinesReader(path: try temp.write(text, to: name))
    }
}
