import CZstd

// Every zstd handle is a final class that frees its C object in deinit. None of them is Sendable:
// a context carries per-call scratch state, so exactly one caller may use it at a time.

/// Owns a `ZSTD_CCtx` and the scratch buffer its frames are written into.
final class CompressionContext {
    let pointer: OpaquePointer
    private var buffer: [UInt8] = []

    init() {
        guard let pointer = ZSTD_createCCtx() else { fatalError("ZSTD_createCCtx: out of memory") }
        self.pointer = pointer
        // Rows name their dictionary in a column and payloads are hashed, so the frame's own
        // dictionary id and checksum would be wasted bytes on every row.
        _ = ZSTD_CCtx_setParameter(pointer, ZSTD_c_dictIDFlag, 0)
        _ = ZSTD_CCtx_setParameter(pointer, ZSTD_c_checksumFlag, 0)
        _ = ZSTD_CCtx_setParameter(pointer, ZSTD_c_contentSizeFlag, 1)
    }

    deinit { ZSTD_freeCCtx(pointer) }

    /// One frame of `payload` with the context's current parameters and dictionary, or zstd's error code.
    func compress(_ payload: [UInt8]) -> Result<[UInt8], ZstdError> {
        let bound = ZSTD_compressBound(payload.count)
        if buffer.count < bound { buffer = [UInt8](repeating: 0, count: bound) }
        let written = buffer.withUnsafeMutableBytes { out in
            payload.withUnsafeBytes { input in
                ZSTD_compress2(pointer, out.baseAddress, out.count, input.baseAddress, input.count)
            }
        }
        if let name = zstdErrorName(written) { return .failure(ZstdError(name: name)) }
        return .success(Array(buffer[0..<written]))
    }
}

/// A zstd error code's name.
struct ZstdError: Error {
    var name: String
}

/// Owns a `ZSTD_DCtx`.
final class DecompressionContext {
    let pointer: OpaquePointer

    init() {
        guard let pointer = ZSTD_createDCtx() else { fatalError("ZSTD_createDCtx: out of memory") }
        self.pointer = pointer
    }

    deinit { ZSTD_freeDCtx(pointer) }
}

/// Owns a `ZSTD_CDict` digested from a trained dictionary.
final class CompressionDictionary {
    let pointer: OpaquePointer

    init?(bytes: [UInt8], level: Int32) {
        let made = bytes.withUnsafeBytes { ZSTD_createCDict($0.baseAddress, $0.count, level) }
        guard let made else { return nil }
        pointer = made
    }

    deinit { ZSTD_freeCDict(pointer) }
}

/// Owns a `ZSTD_DDict` digested from a trained dictionary.
///
/// `@unchecked Sendable`, unlike the contexts: zstd only reads a DDict while decompressing, so one may serve
/// several threads' contexts at once (a scan's reading and decoding threads share them).
final class DecompressionDictionary: @unchecked Sendable {
    let pointer: OpaquePointer

    init?(bytes: [UInt8]) {
        let made = bytes.withUnsafeBytes { ZSTD_createDDict($0.baseAddress, $0.count) }
        guard let made else { return nil }
        pointer = made
    }

    deinit { ZSTD_freeDDict(pointer) }
}

/// Describes a zstd return code when it is an error.
func zstdErrorName(_ code: Int) -> String? {
    ZSTD_isError(code) != 0 ? String(cString: ZSTD_getErrorName(code)) : nil
}
