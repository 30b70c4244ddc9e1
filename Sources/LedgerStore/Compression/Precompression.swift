import CZstd
import Synchronization

/// A payload compressed before it reached the writer, tagged with the dictionary generation it was
/// compressed under. The writer stores these bytes only when its own encoder is on the same generation, and
/// compresses the payload again otherwise, so a dictionary trained meanwhile can never be paired with bytes
/// compressed under another one.
package struct PrecompressedPayload: Sendable, Hashable {
    package var generation: UInt64
    package var bytes: [UInt8]

    package init(generation: UInt64, bytes: [UInt8]) {
        self.generation = generation
        self.bytes = bytes
    }
}

/// The dictionary the writer's encoder compresses with now, published for compressors on other threads.
///
/// Every switch (a dictionary loaded from the file, a new one trained, the encoder rebuilt after a rollback)
/// gets a new generation, so a generation names exactly one dictionary, whatever row ids SQLite reuses.
final class DictionaryBoard: Sendable {
    struct Published: Sendable {
        var generation: UInt64
        /// nil: plain zstd, no dictionary.
        var bytes: [UInt8]?
    }

    private let state = Mutex(Published(generation: 0, bytes: nil))

    /// Publishes `bytes` (nil: none) and returns its generation.
    func publish(_ bytes: [UInt8]?) -> UInt64 {
        state.withLock {
            $0 = Published(generation: $0.generation + 1, bytes: bytes)
            return $0.generation
        }
    }

    var current: Published { state.withLock { $0 } }
}

/// Compresses payloads off the writer, the way the writer would now (same level, same dictionary).
///
/// Not Sendable: it owns a `ZSTD_CCtx`; one thread uses it (an importer's decoding thread). It checks the
/// board once per call, which costs one uncontended lock.
package final class PayloadPrecompressor {
    private let board: DictionaryBoard
    private let level: Int32
    private let context = CompressionContext()
    private var generation: UInt64 = 0
    private var dictionary: CompressionDictionary?

    init(board: DictionaryBoard, level: Int32) {
        self.board = board
        self.level = level
        _ = ZSTD_CCtx_setParameter(context.pointer, ZSTD_c_compressionLevel, level)
    }

    /// `payload` compressed under the writer's current dictionary, or nil when zstd or the dictionary fails
    /// here (the writer then compresses it itself).
    package func compress(_ payload: [UInt8]) -> PrecompressedPayload? {
        let published = board.current
        if published.generation != generation {
            guard adopt(published) else { return nil }
        }
        guard case .success(let frame) = context.compress(payload) else { return nil }
        return PrecompressedPayload(generation: generation, bytes: frame)
    }

    private func adopt(_ published: DictionaryBoard.Published) -> Bool {
        var made: CompressionDictionary?
        if let bytes = published.bytes {
            guard let digested = CompressionDictionary(bytes: bytes, level: level) else { return false }
            made = digested
        }
        // Referencing nil drops the previous dictionary (plain zstd).
        guard ZSTD_isError(ZSTD_CCtx_refCDict(context.pointer, made?.pointer)) == 0 else { return false }
        dictionary = made
        generation = published.generation
        return true
    }
}

@available(*, unavailable)
extension PayloadPrecompressor: Sendable {}
