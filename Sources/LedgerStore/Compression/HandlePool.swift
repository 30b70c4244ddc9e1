import Foundation

/// Lends out zstd handles (`PayloadDecoder`, `PayloadPrecompressor`), so concurrent callers never share a
/// zstd context and none is built per call. Keeps at most `keep` idle handles.
///
/// `@unchecked Sendable` because the lock guards the array; a handle is used by one borrower at a time.
final class HandlePool<Handle>: @unchecked Sendable {
    private let lock = NSLock()
    private var idle: [Handle] = []
    private let keep: Int
    private let make: @Sendable () -> Handle

    init(keep: Int = 8, make: @escaping @Sendable () -> Handle) {
        self.keep = keep
        self.make = make
    }

    /// Runs `body` with a handle nobody else is using.
    func withHandle<T>(_ body: (Handle) throws -> T) rethrows -> T {
        lock.lock()
        let handle = idle.popLast() ?? make()
        lock.unlock()
        defer {
            lock.lock()
            if idle.count < keep { idle.append(handle) }
            lock.unlock()
        }
        return try body(handle)
    }
}

/// Decoders for concurrent readers.
typealias DecoderPool = HandlePool<PayloadDecoder>
