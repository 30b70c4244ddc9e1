import HTTPTypes
import NIOCore

/// The work a body costs the generated OpenAPI decoder, bounded before it runs.
///
/// Foundation's `JSONDecoder` under the generated free-form values (`OpenAPIValueContainer`, which tries each JSON
/// type in turn and builds the coding path on each failed try) spends time per value in proportion to its depth
/// (found by a probe and measured on the release server: a 20 KB `/v1/apns` body of twenty 500-deep arrays took
/// 20.8 s of CPU, 242 KB of 60-deep arrays 11.8 s, 1.6 MB of flat pairs 7.6 s — one ingest key could keep the server
/// busy). The ledger's own parser (the raw append path, `import`) is linear; only bodies that reach the generated
/// decoder are bounded: their values weighted by depth (each `[`, `{` and `,` outside strings counts the depth it
/// is at) may not exceed ``limit``, about a second of that decoder's CPU. A plain `POST /v1/events` or
/// `/v1/batches` never comes here; a snapshot of a thousand activities or an APNs exchange costs a few
/// thousand.
enum DecoderWork {
    static let limit = 100_000

    /// Whether `body` stays within ``limit`` (stops scanning once past it).
    static func withinLimit(_ body: ByteBuffer) -> Bool {
        body.withUnsafeReadableBytes { bytes in
            var depth = 0
            var work = 0
            var inString = false
            var escaped = false
            for byte in bytes {
                if inString {
                    if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "["), UInt8(ascii: "{"):
                    depth += 1
                    work += depth
                case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
                case UInt8(ascii: ","): work += max(depth, 1)
                default: continue
                }
                if work > limit { return false }
            }
            return true
        }
    }

    /// The refusal of a body past ``limit``.
    static var refusal: APIError {
        var error = APIError.badRequest(
            "the body's JSON is too large or too deeply nested for this route (values weighted by depth over \(limit)): split it, or nest less",
            field: "body")
        error.code = "tooComplex"
        return error
    }
}
