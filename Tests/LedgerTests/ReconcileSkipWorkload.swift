import Foundation
import LedgerTesting

/// Activities built around the ends and dismissals the nightly job's row-level skip must read exactly as the fold
/// does: ends the device drops (oversize content, a timestamp over 8 h ahead, in milliseconds, past `Int64`),
/// ends before the request, duplicate and late ends, ends at the 8 h system end, dismissals before the request,
/// scheduled starts, channel ends (dropped ones too) and a second request that names a channel the fold never
/// subscribes to. Recorded in a shuffled order, as a busy server records them.
struct ReconcileSkipWorkload {
    var seed: UInt64
    var activities = 40
    /// Unix seconds of the first request.
    var start: Int64 = 1_795_000_000

    static let kinds = 20
    /// Kinds whose recorded end the device drops or the fold never hears of: the gap a skip could hide.
    static let droppedKinds: Set<Int> = [0, 1, 2, 4, 7, 10, 11, 15, 16, 17, 19]

    func id(_ index: Int) -> String { "E\(seed)-\(index)" }

    static let blob = #"{"blob":"\#(String(repeating: "x", count: 4100))"}"#

    func lines() -> [String] {
        var rng = SeededRandom(seed: seed &* 7919)
        var lines: [String] = []
        for index in 0..<activities {
            let id = id(index)
            let s = start + Int64(index) * 60
            let kind = index % Self.kinds
            let pushType = kind == 10 ? #"{"channel":"edge-1"}"# : #""token""#
            let scheduled = kind == 17 ? #","scheduledStart":\#(s + 3_600)"# : ""
            lines.append(Self.event("activity:\(id)", "request", s, """
                {"attributesType":"RideAttributes","attributes":{"ride":"\(id)"},"content":{"state":{"eta":\(index)}},\
                "pushType":\(pushType),"installation":"I\(index % 3)"\(scheduled)}
                """))
            lines.append(Self.event("activity:\(id)", "token", s + 1, #"{"token":"\#(Self.token(index))"}"#, source: "app"))
            let updateAt = s + Int64.random(in: 60...1_200, using: &rng)
            lines.append(Self.update(id, at: updateAt, state: #"{"eta":\#(index + 100)}"#))
            func end(_ at: Int64, timestamp: Int64? = nil, content: String? = nil, policy: String = "\"default\"") {
                let contentField = content.map { #""content":{"state":\#($0)},"# } ?? ""
                lines.append(Self.event("activity:\(id)", "end", at, """
                    {\(contentField)"timestamp":\(timestamp ?? at),"dismissalPolicy":\(policy)}
                    """))
            }
            func dismiss(_ at: Int64) {
                lines.append(Self.event("activity:\(id)", "dismiss", at, #"{"by":"user"}"#, source: "device"))
            }
            switch kind {
            case 0: end(s + 1_800, content: Self.blob)
            case 1: end(s + 1_800, timestamp: s + 1_800 + 9 * 3_600)
            case 2: end(s + 1_800, timestamp: (s + 1_800) * 1000, content: #"{"eta":0}"#)
            case 3: end(s - 600)
            case 4:
                end(s + 1_200, content: Self.blob)
                end(s + 3 * 3_600)
            case 5:
                end(s + 2 * 3_600)
                end(s + 3_600)
            case 6: end(s + 9 * 3_600)
            case 7: end(s + 9 * 3_600, content: Self.blob)
            case 8:
                dismiss(s + 1_200)
                end(s + 2_400)
            case 9: end(s + 8 * 3_600)
            case 10:
                // A second request: the row is folded even once ended, so the fold must see the channel's end.
                lines.append(Self.event("activity:\(id)", "request", s + 90, """
                    {"attributesType":"RideAttributes","attributes":{"ride":"\(id)"},"content":{"state":{"eta":3}},\
                    "pushType":"token"}
                    """))
            case 11:
                // The fold takes the first request only; the projection also lists the second one's channel.
                lines.append(Self.event("activity:\(id)", "request", s + 60, """
                    {"attributesType":"RideAttributes","attributes":{"ride":"\(id)"},"content":{"state":{"eta":1}},\
                    "pushType":{"channel":"edge-2"}}
                    """))
            case 12: break
            case 13: dismiss(s - 300)
            case 14: end(s + 1_800, policy: #""immediate""#)
            case 15: end(s + 1_800, timestamp: 9_223_372_036_854_776)
            case 16:
                end(s + 1_800, content: Self.blob)
                dismiss(s + 5 * 3_600)
            case 17: end(s + 600, timestamp: s + 600 + 10 * 3_600)
            case 18:
                // A second request without a channel: own-stream ends still count.
                lines.append(Self.event("activity:\(id)", "request", s - 120, """
                    {"attributesType":"RideAttributes","attributes":{"ride":"\(id)"},"content":{"state":{"eta":2}},\
                    "pushType":"token"}
                    """))
                end(s + 2_400)
            default:
                // Subscribed to a channel whose ends are dropped, then a valid one long after the system end.
                lines.append(Self.event("channel:edge-1", "subscribe", s + 30, #"{"activity":"\#(id)"}"#))
            }
        }
        let channelEnds: [(String, Int64, String)] = [
            ("edge-1", start + 2_400, #"{"content":{"state":\#(Self.blob)},"timestamp":\#(start + 2_400)}"#),
            ("edge-1", start + 4_000, #"{"timestamp":\#(start + 4_000 + 9 * 3_600)}"#),
            ("edge-1", start + 11 * 3_600, #"{"timestamp":\#(start + 11 * 3_600)}"#),
            ("edge-2", start + 2 * 3_600, #"{"timestamp":\#(start + 2 * 3_600)}"#),
            ("match-1", start + 5_000, #"{"content":{"state":\#(Self.blob)},"timestamp":\#(start + 5_000)}"#),
            ("match-2", start + 6_000, #"{"timestamp":\#((start + 6_000) * 1000)}"#),
        ]
        for (channel, at, data) in channelEnds {
            lines.append(Self.event("channel:\(channel)", "end", at, data))
        }
        lines.shuffle(using: &rng)
        return lines
    }

    static func update(_ id: String, at: Int64, state: String) -> String {
        event("activity:\(id)", "update", at, #"{"content":{"state":\#(state)},"timestamp":\#(at)}"#)
    }

    static func event(_ stream: String, _ type: String, _ at: Int64, _ data: String, source: String = "server")
        -> String
    {
        #"{"stream":"\#(stream)","type":"\#(type)","at":\#(at),"source":"\#(source)","data":\#(data)}"#
    }

    static func token(_ index: Int) -> String {
        String(format: "%08x", index) + String(repeating: "cd", count: 28)
    }
}
