/// The one spelling of a UUID in the ledger: lower-case hex in 8-4-4-4-12 groups. Event ids in this spelling are
/// stored as their 16 bytes (`StoredEventID` in LedgerStore), which is why parsing accepts nothing else: bytes
/// formatted back give exactly the id that was appended.
public enum CanonicalUUID {
    /// The 16 bytes of `text` when it is a canonical UUID; nil for any other text (upper case included).
    @inlinable
    public static func bytes(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = text.utf8
        guard utf8.count == 36 else { return nil }
        // Every stored event id passes here on the writer: one pass over contiguous bytes into a 16-byte array.
        if let parsed = utf8.withContiguousStorageIfAvailable({ bytes(utf8: $0) }) { return parsed }
        return Array(utf8).withUnsafeBufferPointer { bytes(utf8: $0) }
    }

    /// `bytes(_:)` of 36 UTF-8 bytes.
    @usableFromInline
    static func bytes(utf8: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var valid = true
        let parsed = [UInt8](unsafeUninitializedCapacity: 16) { out, count in
            var offset = 0
            for index in 0..<16 {
                // Dashes before bytes 4, 6, 8 and 10 (offsets 8, 13, 18, 23).
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    guard utf8[offset] == UInt8(ascii: "-") else {
                        valid = false
                        return
                    }
                    offset += 1
                }
                guard let high = lowerHex(utf8[offset]), let low = lowerHex(utf8[offset + 1]) else {
                    valid = false
                    return
                }
                out[index] = high << 4 | low
                count = index + 1
                offset += 2
            }
        }
        return valid ? parsed : nil
    }

    /// A lower-case hex digit's value only, so that an upper-case id stays text and round-trips exactly.
    @inline(__always)
    static func lowerHex(_ byte: UInt8) -> UInt8? {
        byte < UInt8(ascii: "A") || byte > UInt8(ascii: "F") ? Hex.value(byte) : nil
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

    /// A UUID of `version` whose 122 free bits are `fields` (each a value's low `bits` bits, most significant
    /// first), in order: the version's and the variant's bits are skipped, not overwritten, so ids compare (as bytes
    /// or as their text) as their fields do in order.
    public static func make(version: UInt8, orderedBits fields: [(value: UInt64, bits: Int)]) -> String {
        precondition(fields.reduce(0) { $0 + $1.bits } == 122, "a UUID has 122 free bits")
        var bytes = [UInt8](repeating: 0, count: 16)
        var position = 0
        for (value, bits) in fields {
            for bit in stride(from: bits - 1, through: 0, by: -1) {
                // Bits 48–51 hold the version, 64–65 the variant.
                if position == 48 { position = 52 }
                if position == 64 { position = 66 }
                if value >> UInt64(bit) & 1 == 1 { bytes[position / 8] |= 0x80 >> UInt8(position % 8) }
                position += 1
            }
        }
        return make(version: version, from: bytes)
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
