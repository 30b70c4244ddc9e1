import Foundation

/// Hands out `PayloadDecoder`s so concurrent readers never share a zstd context.
///
/// `@unchecked Sendable` because the lock guards the array; a decoder is used by one borrower at a time.
final class DecoderPool: @unchecked Sendable {
    private let lock = NSLock()
    private var idle: [PayloadDecoder] = []

    /// Runs `body` with a decoder nobody else is using.
    func withDecoder<T>(_ body: (PayloadDecoder) throws -> T) rethrows -> T {
        lock.lock()
        let decoder = idle.popLast() ?? PayloadDecoder()
        lock.unlock()
        defer {
            lock.lock()
            if idle.count < 8 { idle.append(decoder) }
            lock.unlock()
        }
        return try body(decoder)
    }
}
