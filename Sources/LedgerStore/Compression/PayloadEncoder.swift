import CZstd

/// Compresses payloads on the writer, with the newest trained dictionary when there is one.
///
/// Not Sendable: it owns one `ZSTD_CCtx`; the store keeps exactly one and uses it only inside the
/// serialized writer.
final class PayloadEncoder {
    private let context = CompressionContext()
    private let level: Int32
    /// The dictionary rows are compressed with now (nil: plain zstd, before the first training).
    private(set) var dictionaryID: Int64?
    private var dictionary: CompressionDictionary?
    private let board: DictionaryBoard
    /// The board's generation of the dictionary used now: precompressed payloads of this generation are
    /// stored as they are.
    private(set) var generation: UInt64

    init(level: Int32, board: DictionaryBoard) {
        self.level = level
        self.board = board
        generation = board.publish(nil)
        _ = ZSTD_CCtx_setParameter(context.pointer, ZSTD_c_compressionLevel, level)
    }

    /// Switches to `bytes` for every later row.
    func use(dictionary bytes: [UInt8], id: Int64) throws {
        guard let made = CompressionDictionary(bytes: bytes, level: level) else {
            throw StoreError(.corruptDictionary, "dictionary \(id) could not be loaded for compression")
        }
        let code = ZSTD_CCtx_refCDict(context.pointer, made.pointer)
        if let name = zstdErrorName(code) {
            throw StoreError(.corruptDictionary, "dictionary \(id) refused by zstd: \(name)")
        }
        dictionary = made
        dictionaryID = id
        generation = board.publish(bytes)
    }

    /// The stored bytes of `event`: its precompressed bytes when they are of this encoder's generation.
    func compress(_ event: NewEvent) throws -> [UInt8] {
        if let ready = event.precompressed, ready.generation == generation { return ready.bytes }
        return try compress(event.payload)
    }

    /// Compressed frame of `payload` under the current dictionary.
    func compress(_ payload: [UInt8]) throws -> [UInt8] {
        switch context.compress(payload) {
        case .success(let frame): return frame
        case .failure(let error): throw StoreError(.compression, "zstd compression failed: \(error.name)")
        }
    }
}
