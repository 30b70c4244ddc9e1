import NIOCore

/// The `Appended` and `BatchResult` documents of the raw-body append route, written straight into a buffer:
/// byte for byte what the generated serializer writes with the server's encoder options (keys sorted, `/`
/// not escaped), without a `JSONEncoder` per response.
enum AppendResponse {
    static func appended(_ result: AppendedEvent) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(160)
        write(result, into: &buffer)
        return buffer
    }

    static func batch(_ results: [AppendedEvent]) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(64 + results.count * 160)
        buffer.writeStaticString(#"{"lastPosition":"#)
        buffer.writeString(String(results.map(\.position).max() ?? 0))
        buffer.writeStaticString(#","results":["#)
        for (index, result) in results.enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: ",")) }
            write(result, into: &buffer)
        }
        buffer.writeStaticString("]}")
        return buffer
    }

    private static func write(_ result: AppendedEvent, into buffer: inout ByteBuffer) {
        buffer.writeStaticString(result.duplicate ? #"{"duplicate":true,"id":"# : #"{"duplicate":false,"id":"#)
        writeString(result.id, into: &buffer)
        buffer.writeStaticString(#","position":"#)
        buffer.writeString(String(result.position))
        buffer.writeStaticString(#","stream":"#)
        writeString(result.stream, into: &buffer)
        buffer.writeStaticString(#","version":"#)
        buffer.writeString(String(result.version))
        buffer.writeInteger(UInt8(ascii: "}"))
    }

    /// A JSON string as `JSONEncoder` escapes it: quote, backslash and control characters only.
    static func writeString(_ string: String, into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(ascii: "\""))
        let utf8 = string.utf8
        if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            buffer.writeString(string)
        } else {
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""): buffer.writeStaticString("\\\"")
                case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
                case 0x08: buffer.writeStaticString("\\b")
                case 0x0C: buffer.writeStaticString("\\f")
                case 0x0A: buffer.writeStaticString("\\n")
                case 0x0D: buffer.writeStaticString("\\r")
                case 0x09: buffer.writeStaticString("\\t")
                case 0..<0x20:
                    let hex: StaticString = "0123456789abcdef"
                    buffer.writeStaticString("\\u00")
                    buffer.writeInteger(hex.utf8Start[Int(byte >> 4)])
                    buffer.writeInteger(hex.utf8Start[Int(byte & 0x0F)])
                default:
                    buffer.writeInteger(byte)
                }
            }
        }
        buffer.writeInteger(UInt8(ascii: "\""))
    }
}
