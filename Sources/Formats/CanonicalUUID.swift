/// The one spelling of a UUID in the ledger: lower-case hex in 8-4-4-4-12 groups. Event ids in this spelling are
/// stored as their 16 bytes (`StoredEventID` in LedgerStore), which is why parsing accepts nothing else: bytes
/// formatted back give exactly the id that was appended.
public enum CanonicalUUID {
    /// The 16 bytes of `text` when it is a canonical UUID; nil for any other text (upper case included).
    @inlinable
    public static func bytes(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = text.utf8
        guard utf8.count == 36 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        var high: UInt8?
        var offset = 0
        for byte in utf8 {
            defer { offset += 1 }
            if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            // Lower case only, so that an upper-case id stays text and round-trips exactly.
            guard byte < UInt8(ascii: "A") || byte > UInt8(ascii: "F"), let nibble = Hex.value(byte) else { return nil }
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return bytes
    }

    /// The canonical spelling of 16 bytes.
    @inlinable
    public static func format(_ bytes: some Collection<UInt8>) -> String {
        precondition(bytes.count == 16, "a UUID is 16 bytes")
        return String(unsafeUninitializedCapacity: 36) { out in
            var index = 0
            var offset = 0
            for byte in bytes {
                if offset == 4 || offset == 6 || offset == 8 || offset == 10 {
                    out[index] = UInt8(ascii: "-")
                    index += 1
                }
                out[index] = Hex.digit(byte >> 4)
                out[index + 1] = Hex.digit(byte & 0x0F)
                index += 2
                offset += 1
            }
            return index
        }
    }

    /// The first 16 of `bytes` with the RFC 9562 `version` and variant bits set, spelled canonically: a random
    /// UUID (version 4) or one derived from a hash (version 8).
    public static func make(version: UInt8, from bytes: some Sequence<UInt8>) -> String {
        var bytes = Array(bytes.prefix(16))
        precondition(bytes.count == 16, "a UUID is 16 bytes")
        bytes[6] = bytes[6] & 0x0F | version << 4
        bytes[8] = bytes[8] & 0x3F | 0x80
        return format(bytes)
    }

    /// A random (version 4) UUID drawn from `generator`, one byte per draw (seeded corpora depend on the order).
    public static func random(using generator: inout some RandomNumberGenerator) -> String {
        make(version: 4, from: (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// A random (version 4) UUID from the system's generator.
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A time-ordered (version 7, RFC 9562) UUID: `milliseconds` since the Unix epoch in its first 48 bits,
    /// random bits after. Ids made later sort after earlier ones (to the millisecond), so an index keyed by them
    /// grows at its end instead of at random places.
    public static func timeOrdered(milliseconds: Int64, using generator: inout some RandomNumberGenerator) -> String {
        let time = UInt64(clamping: max(0, milliseconds)) & 0xFFFF_FFFF_FFFF
        let timeBytes = (0..<6).map { UInt8(truncatingIfNeeded: time >> (40 - 8 * $0)) }
        return make(version: 7, from: timeBytes + (0..<10).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}
