/// A point in time with millisecond precision (Unix milliseconds), the ledger's event time.
///
/// Parses RFC 3339 with any offset and any number of fractional digits (truncated to milliseconds), or a
/// number of Unix seconds (possibly fractional). Always formats as RFC 3339 UTC with milliseconds.
public struct Instant: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }
    public init(seconds: Int64) { self.milliseconds = seconds &* 1000 }

    /// Whole Unix seconds, rounded down.
    public var seconds: Int64 { milliseconds / 1000 - (milliseconds % 1000 < 0 ? 1 : 0) }

    /// Times the ledger accepts on input: years 0000–9999 (so that every instant formats as RFC 3339).
    static let acceptedMilliseconds: ClosedRange<Int64> = -62_167_219_200_000...253_402_300_799_999

    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.milliseconds < rhs.milliseconds }

    public func adding(milliseconds delta: Int64) -> Instant { Instant(milliseconds: milliseconds &+ delta) }
    public func adding(hours: Int64) -> Instant { adding(milliseconds: hours * 3_600_000) }

    public static let hour: Int64 = 3_600_000

    public var description: String { rfc3339 }

    /// Unix seconds, possibly fractional, as sent on input ("Unix seconds are accepted wherever a time is expected").
    ///
    /// The one rule for every time the ledger takes — event `at`, APNs `at`, CLI options, query parameters: an
    /// RFC 3339 time with at most 9 fraction digits, or Unix seconds under 1e11 in magnitude, and in both forms an
    /// instant within the years 0000–9999 (UTC), the range RFC 3339 can write back. Schemas/openapi.yaml's `Time`
    /// and `TimeParameter` describe exactly this.
    public init?(unixSeconds number: JSONNumber) {
        if let int = Int64(number.text) {
            guard int > -100_000_000_000, int < 100_000_000_000 else { return nil }
            self.init(seconds: int)
        } else {
            let double = number.doubleValue
            guard double.isFinite, abs(double) < 1e11 else { return nil }
            self.init(milliseconds: Int64((double * 1000).rounded(.down)))
        }
        guard Self.acceptedMilliseconds.contains(milliseconds) else { return nil }
    }

    /// A time written as text — a CLI option, a query parameter: RFC 3339 (any offset) or Unix seconds written
    /// `-?[0-9]{1,11}(.[0-9]+)?` (no exponent, no sign but `-`), under the rule of ``init(unixSeconds:)``. NaN,
    /// infinities, `1e300` and out-of-range values are nil.
    public init?(parsing text: String) {
        if Self.isUnixSecondsText(text) {
            self.init(unixSeconds: JSONNumber(literal: text))
        } else {
            self.init(rfc3339: text)
        }
    }

    /// `-?[0-9]{1,11}(\.[0-9]+)?`: how Unix seconds are written as text.
    private static func isUnixSecondsText(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let isDigit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        let integer = bytes.prefix(while: isDigit)
        guard (1...11).contains(integer.count) else { return false }
        let rest = bytes.dropFirst(integer.count)
        if rest.isEmpty { return true }
        guard rest.first == UInt8(ascii: "."), rest.count > 1 else { return false }
        return rest.dropFirst().allSatisfy(isDigit)
    }

    /// A time given as a JSON value: an RFC 3339 string or a number of Unix seconds (same rule as `parsing`).
    public init?(json value: JSONValue) {
        switch value {
        case .string(let text): self.init(rfc3339: text)
        case .number(let number): self.init(unixSeconds: number)
        default: return nil
        }
    }

    /// Unix milliseconds as a JSON number (APNs 410 bodies).
    public init?(unixMilliseconds number: JSONNumber) {
        guard let int = number.int64Value, Self.acceptedMilliseconds.contains(int) else { return nil }
        self.init(milliseconds: int)
    }
}

extension Instant {
    /// Parses `2026-11-20T21:14:03.250Z`, `2026-11-20T22:14:03+01:00`, `2026-11-20 21:14:03.25z`… with at most
    /// 9 fraction digits, within the years 0000–9999 once the offset is applied (the rule of
    /// ``init(unixSeconds:)``).
    public init?(rfc3339 string: String) {
        var copy = string
        guard let value = copy.withUTF8({ Instant(rfc3339: $0) }) else { return nil }
        self = value
    }

    /// `init?(rfc3339:)` of a string's UTF-8 bytes, read where they lie (a payload being scanned).
    public init?(rfc3339 utf8: UnsafeBufferPointer<UInt8>) {
        guard let value = Instant.parse(utf8), Self.acceptedMilliseconds.contains(value.milliseconds) else { return nil }
        self = value
    }

    private static func parse(_ b: UnsafeBufferPointer<UInt8>) -> Instant? {
        var i = 0
        func digits(_ count: Int) -> Int64? {
            guard i + count <= b.count else { return nil }
            var value: Int64 = 0
            for _ in 0..<count {
                let d = b[i] &- UInt8(ascii: "0")
                guard d < 10 else { return nil }
                value = value * 10 + Int64(d)
                i += 1
            }
            return value
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(UInt8(ascii: "-")), let month = digits(2), expect(UInt8(ascii: "-")),
            let day = digits(2)
        else { return nil }
        guard i < b.count, b[i] == UInt8(ascii: "T") || b[i] == UInt8(ascii: "t") || b[i] == UInt8(ascii: " ")
        else { return nil }
        i += 1
        guard let hour = digits(2), expect(UInt8(ascii: ":")), let minute = digits(2), expect(UInt8(ascii: ":")),
            let second = digits(2)
        else { return nil }
        var millis: Int64 = 0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            var count = 0
            while i < b.count, b[i] >= UInt8(ascii: "0"), b[i] <= UInt8(ascii: "9") {
                if count < 3 { millis = millis * 10 + Int64(b[i] - UInt8(ascii: "0")) }
                count += 1
                i += 1
            }
            guard (1...9).contains(count) else { return nil }
            for _ in count..<max(count, 3) { millis *= 10 }
        }
        var offsetMinutes: Int64 = 0
        guard i < b.count else { return nil }
        if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
            i += 1
        } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign: Int64 = b[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let oh = digits(2), expect(UInt8(ascii: ":")), let om = digits(2), oh < 24, om < 60 else {
                return nil
            }
            offsetMinutes = sign * (oh * 60 + om)
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month), hour < 24,
            minute < 60, second <= 60
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let secs = days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offsetMinutes * 60
        return Instant(milliseconds: secs * 1000 + millis)
    }

    static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Howard Hinnant's days_from_civil.
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ z0: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// `2026-11-20T21:14:03.250Z`
    public var rfc3339: String {
        var ms = milliseconds % 1000
        var secs = milliseconds / 1000
        if ms < 0 {
            ms += 1000
            secs -= 1
        }
        var days = secs / 86_400
        var rem = secs % 86_400
        if rem < 0 {
            rem += 86_400
            days -= 1
        }
        let (y, m, d) = Instant.civilFromDays(days)
        // Written in place: every stored time an answer or a payload shows passes here.
        return String(unsafeUninitializedCapacity: 24) { out in
            var index = 0
            func put(_ value: Int64, _ width: Int, then mark: UInt8) {
                var v = value.magnitude
                for k in stride(from: width - 1, through: 0, by: -1) {
                    out[index + k] = UInt8(ascii: "0") + UInt8(v % 10)
                    v /= 10
                }
                out[index + width] = mark
                index += width + 1
            }
            put(y, 4, then: UInt8(ascii: "-"))
            put(m, 2, then: UInt8(ascii: "-"))
            put(d, 2, then: UInt8(ascii: "T"))
            put(rem / 3600, 2, then: UInt8(ascii: ":"))
            put(rem % 3600 / 60, 2, then: UInt8(ascii: ":"))
            put(rem % 60, 2, then: UInt8(ascii: "."))
            put(ms, 3, then: UInt8(ascii: "Z"))
            return index
        }
    }
}

extension Instant: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            guard let instant = Instant(rfc3339: string) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected an RFC 3339 time")
            }
            self = instant
        } else {
            let seconds = try container.decode(Double.self)
            guard let instant = Instant(unixSeconds: JSONNumber(seconds)) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "time out of range")
            }
            self = instant
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rfc3339)
    }
}
