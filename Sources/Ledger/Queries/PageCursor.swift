import Foundation

/// The activity list's cursor as clients see it (`nextCursor`, the CLI's `--after`, HTTP's `cursor`): the last
/// activity id of the page and a checksum of it, in base64url.
///
/// A bare activity id would "work" whatever it is: a typo silently started at some other place in the list. A
/// cursor the ledger did not hand out fails its checksum and is refused (exit 2 / 400 naming `cursor`). The
/// checksum is not a secret: a cursor only says where a list resumes, within the caller's app. Each list has its
/// own `Kind` in the checksum, so one list's cursor is refused by the other (found: `GET /v1/activities`' cursor
/// was taken by an update's audit as a place in its subscribers, a silent wrong page).
public enum PageCursor {
    /// The list a cursor pages.
    public enum Kind: String, Sendable {
        /// `activities` (`GET /v1/activities`).
        case activities
        /// The activities an update addressed (`audit --update`, `GET /v1/updates/{id}/audit`).
        case subscribers
    }

    /// The cursor to hand out for a page ending at activity `next`.
    public static func encode(_ next: String, kind: Kind) -> String {
        var bytes = Array(next.utf8)
        withUnsafeBytes(of: checksum(bytes, kind: kind).bigEndian) { bytes.append(contentsOf: $0) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The activity id inside `text`, or nil when `text` is not a cursor ``encode(_:kind:)`` made for `kind`.
    public static func decode(_ text: String, kind: Kind) -> String? {
        guard !text.isEmpty, text.utf8.count <= 4096,
            text.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || isAlphanumeric($0) })
        else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), data.count >= 8 else { return nil }
        let bytes = Array(data)
        let payload = Array(bytes[..<(bytes.count - 8)])
        let stored = bytes[(bytes.count - 8)...].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard stored == checksum(payload, kind: kind) else { return nil }
        return String(validating: payload, as: UTF8.self)
    }

    /// FNV-1a (64 bit) of `bytes`, after a version tag naming the list (the activity list's tag as before kinds).
    private static func checksum(_ bytes: [UInt8], kind: Kind) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        let tag = kind == .activities ? "activity-ledger.cursor.1:" : "activity-ledger.cursor.1:\(kind.rawValue):"
        for byte in Array(tag.utf8) + bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }
}
