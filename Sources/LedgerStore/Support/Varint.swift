/// LEB128 varints, the one spelling of an unsigned number in sealed blocks (`SegmentBlock`) and the sealed ids'
/// bucket entries (`SealedIDs`): 7 bits per byte, low bits first, the high bit set on every byte but the last.
enum Varint {
    @inline(__always)
    static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// The number at `offset` in `bytes`, moving `offset` past it; nil when it runs past the end or past 64 bits.
    @inline(__always)
    static func read(_ bytes: UnsafeRawBufferPointer, at offset: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < bytes.count, shift < 64 else { return nil }
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }
}
