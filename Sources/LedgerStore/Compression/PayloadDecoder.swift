import CZstd
import Foundation
import GRDB

/// Decompresses stored payloads, loading each dictionary from the file the first time a row names it.
///
/// Not Sendable: it owns one `ZSTD_DCtx`. Readers borrow one from a `DecoderPool` for the length of a call.
final class PayloadDecoder {
    private let context = DecompressionContext()
    private var dictionaries: [Int64: DecompressionDictionary] = [:]

    /// Payload bytes of one stored frame; `dictionary` is the row's dictionary id (nil: none).
    func decompress(_ frame: UnsafeRawBufferPointer, dictionary: Int64?, db: Database) throws -> [UInt8] {
        try decompress(frame, using: try dictionary.map { try loaded($0, db: db) })
    }

    /// Payload bytes of one stored frame compressed with `ddict` (nil: none). Needs no database, so a scan's
    /// second thread can call it with dictionaries the reading thread loaded (`loaded(_:db:)`).
    func decompress(_ frame: UnsafeRawBufferPointer, using ddict: DecompressionDictionary?) throws -> [UInt8] {
        let size = ZSTD_getFrameContentSize(frame.baseAddress, frame.count)
        // ZSTD_CONTENTSIZE_UNKNOWN and ZSTD_CONTENTSIZE_ERROR are the two largest values.
        guard size < UInt64.max - 1, size <= UInt64(Int32.max) else {
            throw StoreError(.corruptPayload, "payload frame has no readable content size")
        }
        let count = Int(size)
        if count == 0 { return [] }
        var output = [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            initialized = 0
            let written: Int
            if let ddict {
                written = ZSTD_decompress_usingDDict(
                    context.pointer, out.baseAddress, count, frame.baseAddress, frame.count, ddict.pointer)
            } else {
                written = ZSTD_decompressDCtx(context.pointer, out.baseAddress, count, frame.baseAddress, frame.count)
            }
            initialized = ZSTD_isError(written) != 0 ? 0 : written
        }
        if output.count != count {
            output = []
            throw StoreError(.corruptPayload, "payload frame does not decompress")
        }
        return output
    }

    /// The dictionary `id`, read from the file the first time.
    func loaded(_ id: Int64, db: Database) throws -> DecompressionDictionary {
        if let cached = dictionaries[id] { return cached }
        guard let data = try Data.fetchOne(db, sql: "SELECT bytes FROM dictionaries WHERE id = ?", arguments: [id])
        else { throw StoreError(.corruptDictionary, "dictionary \(id) is named by a row but missing from the file") }
        guard let made = DecompressionDictionary(bytes: Array(data)) else {
            throw StoreError(.corruptDictionary, "dictionary \(id) could not be loaded for decompression")
        }
        dictionaries[id] = made
        return made
    }
}
