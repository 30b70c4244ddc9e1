import CZstd

// Every zstd handle is a final class that frees its C object in deinit. None of them is Sendable:
// a context carries per-call scratch state, so exactly one caller may use it at a time.

/// Owns a `ZSTD_CCtx`.
final class CompressionContext {
    let pointer: OpaquePointer

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
final class DecompressionDictionary {
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
