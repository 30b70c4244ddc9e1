/// The uncompressed bytes of one block of a sealed segment: one stream's consecutive events of the segment
/// (versions `first_version` … `last_version`, so a version is implicit), field by field (since 2026-11-29):
///
/// | part | encoding |
/// |---|---|
/// | layout | one 0 byte |
/// | positions | a varint per event: its position minus the previous event's (the first: minus first − 1) |
/// | id lengths, type lengths | a varint per event each |
/// | at, recorded_at | a zig-zag varint per event each: the difference to the previous event's (the first: to 0) |
/// | payload lengths | a varint per event |
/// | ids, types, payloads | each kind back to back: ids (UTF-8, app-qualified, as appended), types, payloads |
///
/// Each kind of field next to its like compresses better than event after event: the bench corpus's blocks are
/// 2.5 % smaller (BENCHMARKS.md, session 38). Blocks sealed before hold one record per event (position, id, type,
/// at, recorded_at, payload, each encoded as above with its length before each text): their first byte, a
/// position step, is never 0, so both layouts are read.
///
/// The block is stored as one zstd frame (`segment_blocks.data`). Decoding never trusts the bytes: any length
/// past the end, a position outside the segment or a record count that is not the block's version range is an
/// error, not a crash (verify reads damaged blocks).
enum SegmentBlock {
    /// One event as a block holds it (the stream and version come from the block's row).
    /// The first byte of a block in the field-by-field layout.
    private static let columnar: UInt8 = 0

    /// Appends the block of `events[i]` for each `i` of `block` (one stream's events, in version order).
    /// The events are read in place: a loop over copies retained and released every name and payload once per
    /// column (nine times per event).
    static func encode(_ events: [RecordedEvent], _ block: [Int], segmentStart: Int64, into bytes: inout [UInt8]) {
        events.withUnsafeBufferPointer { events in
            bytes.append(columnar)
            var previous = segmentStart - 1
            for index in block {
                Varint.append(UInt64(events[index].position - previous), to: &bytes)
                previous = events[index].position
            }
            for index in block { Varint.append(UInt64(events[index].id.utf8.count), to: &bytes) }
            for index in block { Varint.append(UInt64(events[index].type.utf8.count), to: &bytes) }
            var previousAt: Int64 = 0
            for index in block {
                Varint.append(zigzag(events[index].at &- previousAt), to: &bytes)
                previousAt = events[index].at
            }
            var previousRecordedAt: Int64 = 0
            for index in block {
                Varint.append(zigzag(events[index].recordedAt &- previousRecordedAt), to: &bytes)
                previousRecordedAt = events[index].recordedAt
            }
            for index in block { Varint.append(UInt64(events[index].payload.count), to: &bytes) }
            for index in block { bytes.append(contentsOf: events[index].id.utf8) }
            for index in block { bytes.append(contentsOf: events[index].type.utf8) }
            for index in block { bytes.append(contentsOf: events[index].payload) }
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
        if bytes.first == columnar {
            try forEachColumnarRecord(bytes, count: count, segmentStart: segmentStart, segmentEnd: segmentEnd, body)
            return
        }
        var reader = Reader(bytes: bytes)
        var index = 0
        var position = segmentStart - 1
        var at: Int64 = 0
        var recordedAt: Int64 = 0
        while reader.offset < bytes.count {
            guard index < count else { throw BlockError("it holds more events than its version range") }
            position = try reader.position(after: position, end: segmentEnd)
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

    /// The field-by-field layout: one pass finds where each column starts (and the byte columns' sizes from their
    /// lengths), then the records are read with a cursor in each column.
    private static func forEachColumnarRecord(
        _ bytes: UnsafeRawBufferPointer, count: Int, segmentStart: Int64, segmentEnd: Int64,
        _ body: (RecordView) -> Bool
    ) throws(BlockError) {
        guard count >= 1, count <= bytes.count else { throw BlockError("it holds fewer events than its version range") }
        // The varint columns in order: positions, id lengths, type lengths, at, recorded_at, payload lengths.
        var scan = Reader(bytes: bytes, offset: 1)
        func skip(summing: Bool) throws(BlockError) -> (start: Int, sum: Int) {
            let start = scan.offset
            var sum = 0
            for _ in 0..<count {
                let value = try scan.varint()
                guard summing else { continue }
                guard value <= UInt64(bytes.count) else { throw BlockError("a field runs past its end") }
                sum += Int(value)
            }
            return (start, sum)
        }
        var positions = Reader(bytes: bytes, offset: try skip(summing: false).start)
        let idColumn = try skip(summing: true)
        let typeColumn = try skip(summing: true)
        var ats = Reader(bytes: bytes, offset: try skip(summing: false).start)
        var recordedAts = Reader(bytes: bytes, offset: try skip(summing: false).start)
        let payloadColumn = try skip(summing: true)
        guard idColumn.sum + typeColumn.sum + payloadColumn.sum == bytes.count - scan.offset else {
            throw BlockError("its fields do not fill it")
        }
        var idLengths = Reader(bytes: bytes, offset: idColumn.start)
        var typeLengths = Reader(bytes: bytes, offset: typeColumn.start)
        var payloadLengths = Reader(bytes: bytes, offset: payloadColumn.start)
        var ids = Reader(bytes: bytes, offset: scan.offset)
        var types = Reader(bytes: bytes, offset: scan.offset + idColumn.sum)
        var payloads = Reader(bytes: bytes, offset: scan.offset + idColumn.sum + typeColumn.sum)
        var position = segmentStart - 1
        var at: Int64 = 0
        var recordedAt: Int64 = 0
        for index in 0..<count {
            position = try positions.position(after: position, end: segmentEnd)
            let id = try ids.bytes(Int(try idLengths.varint()))
            let type = try types.bytes(Int(try typeLengths.varint()))
            at = at &+ unzigzag(try ats.varint())
            recordedAt = recordedAt &+ unzigzag(try recordedAts.varint())
            let payload = try payloads.bytes(Int(try payloadLengths.varint()))
            guard body(RecordView(
                position: position, index: index, id: id, type: type, at: at, recordedAt: recordedAt, payload: payload))
            else { return }
        }
    }

    /// Why a block's bytes do not decode.
    struct BlockError: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        /// The position a step read here leads to from `previous`, inside a segment ending at `end`.
        mutating func position(after previous: Int64, end: Int64) throws(BlockError) -> Int64 {
            let step = try varint()
            guard step >= 1, step <= UInt64(end - previous) else {
                throw BlockError("an event's position is outside the segment")
            }
            return previous + Int64(step)
        }

        mutating func varint() throws(BlockError) -> UInt64 {
            guard let value = Varint.read(bytes, at: &offset) else { throw BlockError("a number runs past its end") }
            return value
        }

        mutating func bytes(_ count: Int) throws(BlockError) -> UnsafeRawBufferPointer {
            guard count >= 0, count <= bytes.count - offset else { throw BlockError("a field runs past its end") }
            defer { offset += count }
            return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
        }
    }

    private static func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }
    private static func unzigzag(_ value: UInt64) -> Int64 { Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1) }
}
