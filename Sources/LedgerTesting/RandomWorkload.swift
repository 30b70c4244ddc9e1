import Formats
import Foundation

/// An adversarial workload for equivalence tests: events arrive out of event-time order, tokens rotate and die,
/// channels broadcast, updates are retried, superseded, oversized or far in the future, activities end and are
/// dismissed. Every line is a valid SPEC §2 event, so everything is recorded (and much of it flagged).
public struct RandomWorkload: Sendable {
    public var seed: UInt64
    public var activities: Int
    public var eventsPerActivity: Int
    /// Unix seconds of the first request.
    public var start: Int64 = 1_795_000_000

    public init(seed: UInt64, activities: Int = 20, eventsPerActivity: Int = 30) {
        self.seed = seed
        self.activities = activities
        self.eventsPerActivity = eventsPerActivity
    }

    /// The JSON Lines, in recording order (which is not event-time order).
    public func lines() -> [String] {
        var rng = SeededRandom(seed: seed)
        var lines: [String] = []
        let channels = ["channel:match-1", "channel:match-2"]
        for index in 0..<activities {
            let activity = "A\(seed)-\(index)"
            var at = start + Int64(index) * 60
            var timestamp = at
            let channel = index % 4 == 0 ? channels[index % 2] : nil
            let pushType = channel.map { "{\"channel\":\"\($0.dropFirst(8))\"}" } ?? "\"token\""
            lines.append(event(activity, "request", at, """
                {"attributesType":"RideAttributes","attributes":{"ride":"\(activity)"},\
                "content":{"state":{"eta":\(Int.random(in: 1...30, using: &rng))},"staleDate":\(at + 600)},\
                "pushType":\(pushType),"installation":"I\(index % 5)"}
                """))
            var token = 0
            lines.append(event(activity, "token", at + 1, "{\"token\":\"\(hexToken(index, token))\"}"))
            var updates: [String] = []
            for _ in 0..<eventsPerActivity {
                at += Int64.random(in: 1...900, using: &rng)
                let jitter = Int64.random(in: -1200...60, using: &rng)  // late arrivals
                let when = at + (Bool.random(using: &rng) ? 0 : jitter)
                switch Int.random(in: 0..<100, using: &rng) {
                case 0..<40:
                    timestamp += Int64.random(in: -120...300, using: &rng)
                    let future = Int.random(in: 0..<40, using: &rng) == 0 ? 9 * 3600 : 0
                    let big = Int.random(in: 0..<40, using: &rng) == 0
                    let state = big ? "{\"blob\":\"\(String(repeating: "x", count: 4100))\"}" : "{\"eta\":\(Int.random(in: 0...30, using: &rng))}"
                    let id = rng.uuid()
                    updates.append(id)
                    lines.append(event(activity, "update", when, """
                        {"content":{"state":\(state),"staleDate":\(when + 300)},"timestamp":\(timestamp + Int64(future))}
                        """, id: id))
                case 40..<60 where !updates.isEmpty:
                    let refers = updates.randomElement(using: &rng)!
                    let status = [200, 200, 200, 429, 410, 400].randomElement(using: &rng)!
                    let reason = status == 200 ? "" : ",\"reason\":\"\(status == 410 ? "Unregistered" : status == 429 ? "TooManyRequests" : "BadDeviceToken")\""
                    let apnsTimestamp = status == 410 && Bool.random(using: &rng) ? ",\"apnsTimestamp\":\((when - 30) * 1000)" : ""
                    lines.append(event(activity, "push", when, """
                        {"refersTo":"\(refers)","status":\(status)\(reason),"token":"\(hexToken(index, token))"\(apnsTimestamp)}
                        """, source: "apns"))
                case 60..<70:
                    let state = ["active", "stale", "ended", "dismissed"].randomElement(using: &rng)!
                    lines.append(event(activity, "observe", when, """
                        {"activityState":"\(state)","contentTimestamp":\(timestamp - Int64.random(in: 0...200, using: &rng))}
                        """, source: "device"))
                case 70..<78:
                    token += 1
                    lines.append(event(activity, "token", when, "{\"token\":\"\(hexToken(index, token))\"}", source: "app"))
                case 78..<86 where channel != nil:
                    timestamp += 30
                    lines.append(raw(channel!, "update", when, "{\"content\":{\"state\":{\"score\":\"\(Int.random(in: 0...5, using: &rng))-\(Int.random(in: 0...5, using: &rng))\"}},\"timestamp\":\(timestamp)}", id: rng.uuid(), source: "server"))
                case 86..<90:
                    let policy = ["\"default\"", "\"immediate\"", "{\"after\":\(when + Int64.random(in: -600...20000, using: &rng))}"].randomElement(using: &rng)!
                    lines.append(event(activity, "end", when, "{\"timestamp\":\(timestamp + 1),\"dismissalPolicy\":\(policy)}", source: Bool.random(using: &rng) ? "app" : "server"))
                case 90..<93:
                    lines.append(event(activity, "dismiss", when, "{\"by\":\"user\"}", source: "device"))
                case 93..<96 where channel == nil:
                    let other = channels.randomElement(using: &rng)!
                    lines.append(raw(other, "subscribe", when, "{\"activity\":\"\(activity)\"}", id: rng.uuid(), source: "server"))
                default:
                    lines.append(raw("installation:I\(index % 5)", "startToken", when, "{\"token\":\"\(hexToken(100 + index, token))\"}", id: rng.uuid(), source: "app"))
                }
            }
        }
        // Interleave activities the way a busy server records them.
        lines.shuffle(using: &rng)
        return lines
    }

    private func event(_ activity: String, _ type: String, _ at: Int64, _ data: String, id: String? = nil, source: String = "server") -> String {
        raw("activity:\(activity)", type, at, data, id: id, source: source)
    }

    private func raw(_ stream: String, _ type: String, _ at: Int64, _ data: String, id: String? = nil, source: String) -> String {
        let idField = id.map { "\"id\":\"\($0)\"," } ?? ""
        return "{\(idField)\"stream\":\"\(stream)\",\"type\":\"\(type)\",\"at\":\(at),\"source\":\"\(source)\",\"data\":\(data)}"
    }

    /// `index` and `generation` as 8 hex digits each (32 bits, big-endian), padded to a 64-digit token.
    private func hexToken(_ index: Int, _ generation: Int) -> String {
        let words = [UInt32(truncatingIfNeeded: index), UInt32(truncatingIfNeeded: generation)]
        let bytes = words.flatMap { word in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: word >> $0) } }
        return Hex.encode(bytes) + String(repeating: "ab", count: 24)
    }
}
