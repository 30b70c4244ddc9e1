/// The uncompressed bytes of one block of a sealed segment: one stream's consecutive events of the segment
/// (versions `first_version` … `last_version`, so a version is implicit), one record after another:
///
/// | field | encoding |
/// |---|---|
/// | position | varint: the position minus the previous record's (the first: minus the segment's first position − 1) |
/// | id | varint length, then its UTF-8 bytes (qualified by its app, exactly as appended) |
/// | type | varint length, then UTF-8 |
/// | at | zig-zag varint: the difference to the previous record's `at` (the first: to 0) |
/// | recorded_at | zig-zag varint, the same way |
/// | payload | varint length, then the uncompressed bytes |
///
/// The block is stored as one zstd frame (`segment_blocks.data`). Decoding never trusts the bytes: any length
/// past the end, a position outside the segment or a record count that is not the block's version range is an
/// error, not a crash (verify reads damaged blocks).
enum SegmentBlock {
    /// One event as a block holds it (the stream and version come from the block's row).
    struct Record: Sendable {
        var position: Int64
        var id: String
        var type: String
        var at: Int64
        var recordedAt: Int64
        var payload: [UInt8]
    }

    static func encode(_ records: [Record], segmentStart: Int64, into bytes: inout [UInt8]) {
        var previousPosition = segmentStart - 1
        var previousAt: Int64 = 0
        var previousRecordedAt: Int64 = 0
        for record in records {
            appendVarint(UInt64(record.position - previousPosition), to: &bytes)
            appendText(record.id, to: &bytes)
            appendText(record.type, to: &bytes)
            appendVarint(zigzag(record.at &- previousAt), to: &bytes)
            appendVarint(zigzag(record.recordedAt &- previousRecordedAt), to: &bytes)
            appendVarint(UInt64(record.payload.count), to: &bytes)
            bytes.append(contentsOf: record.payload)
            previousPosition = record.position
            previousAt = record.at
            previousRecordedAt = record.recordedAt
        }
    }

    /// One record of a block, its fields lent as bytes of the block (valid only inside `forEachRecord`'s body).
    struct RecordView {
        var position: Int64
        /// 0 for the block's first record: its version is the block's first version plus this.
        var index: Int
        var id: UnsafeRawBufferPointer
        var type: UnsafeRawBufferPointer
        var at: Int64
        var recordedAt: Int64
        var payload: UnsafeRawBufferPointer
    }

    /// Calls `body` with each record of a block of `count` events in the segment `segmentStart…segmentEnd`, in
    /// order, copying nothing, until `body` returns false: the one parser of this format (`RawSegment.forEachRecord`
    /// reads every block through it, for events, lent views and chain hashes).
    static func forEachRecord(
        _ bytes: UnsafeRawBufferPointer, count: Int, segmentStart: Int64, segmentEnd: Int64,
        _ body: (RecordView) -> Bool
    ) throws(BlockError) {
        var reader = Reader(bytes: bytes)
        var index = 0
        var position = segmentStart - 1
        var at: Int64 = 0
        var recordedAt: Int64 = 0
        while reader.offset < bytes.count {
            guard index < count else { throw BlockError("it holds more events than its version range") }
            let step = try reader.varint()
            guard step >= 1, step <= UInt64(segmentEnd - position) else {
                throw BlockError("an event's position is outside the segment")
            }
            position += Int64(step)
            let id = try reader.bytes(Int(clamping: try reader.varint()))
            let type = try reader.bytes(Int(clamping: try reader.varint()))
            at = at &+ unzigzag(try reader.varint())
            recordedAt = recordedAt &+ unzigzag(try reader.varint())
            let payload = try reader.bytes(Int(clamping: try reader.varint()))
            guard body(RecordView(
                position: position, index: index, id: id, type: type, at: at, recordedAt: recordedAt, payload: payload))
            else { return }
            index += 1
        }
        guard index == count else { throw BlockError("it holds fewer events than its version range") }
    }

    /// Why a block's bytes do not decode.
    struct BlockError: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        mutating func varint() throws(BlockError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard offset < bytes.count, shift < 64 else { throw BlockError("a number runs past its end") }
                let byte = bytes[offset]
                offset += 1
                value |= UInt64(byte & 0x7f) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
        }

        mutating func bytes(_ count: Int) throws(BlockError) -> UnsafeRawBufferPointer {
            guard count >= 0, count <= bytes.count - offset else { throw BlockError("a field runs past its end") }
            defer { offset += count }
            return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
        }
    }

    private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    private static func appendText(_ text: String, to bytes: inout [UInt8]) {
        appendVarint(UInt64(text.utf8.count), to: &bytes)
        bytes.append(contentsOf: text.utf8)
    }

    private static func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }
    private static func unzigzag(_ value: UInt64) -> Int64 { Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1) }
}
