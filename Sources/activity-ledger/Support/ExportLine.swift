import Foundation
import LedgerStore

/// The one place that maps a stored event to an export line. For now: id, stream, type, at (RFC 3339 ms UTC)
/// and the payload (embedded as JSON when it parses, else a base64 string). The integrator replaces this
/// with the domain JSON.
enum ExportLine {
    static func line(for event: RecordedEvent) -> String {
        "{\"id\":\(quote(event.id)),\"stream\":\(quote(event.stream)),\"type\":\(quote(event.type)),"
            + "\"at\":\"\(rfc3339(milliseconds: event.at))\",\"payload\":\(payloadJSON(event.payload))}"
    }

    static func payloadJSON(_ payload: [UInt8]) -> String {
        let data = Data(payload)
        if let parsed = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) {
            // Compact JSON embeds as-is; anything with raw line breaks is re-encoded onto one line.
            if !payload.contains(0x0A) && !payload.contains(0x0D) {
                return String(decoding: payload, as: UTF8.self)
            }
            if let compact = try? JSONSerialization.data(
                withJSONObject: parsed, options: [.fragmentsAllowed, .withoutEscapingSlashes])
            {
                return String(decoding: compact, as: UTF8.self)
            }
        }
        return quote(data.base64EncodedString())
    }

    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20: out += String(format: "\\u%04x", c.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// Unix milliseconds as `2026-11-20T21:14:03.250Z`.
    static func rfc3339(milliseconds: Int64) -> String {
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let ms = ((milliseconds % 1000) + 1000) % 1000
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0,
            c.minute ?? 0, c.second ?? 0, Int(ms))
    }
}
