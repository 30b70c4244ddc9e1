import Foundation

/// Hands out `PayloadPrecompressor`s to concurrent appenders, so each compresses its own batch on its own
/// thread before joining the group commit, and the single writer only hashes and inserts.
///
/// `@unchecked Sendable` because the lock guards the array; a precompressor is used by one borrower at a time.
final class PrecompressorPool: @unchecked Sendable {
    private let lock = NSLock()
    private var idle: [PayloadPrecompressor] = []
    private let make: () -> PayloadPrecompressor

    init(make: @escaping @Sendable () -> PayloadPrecompressor) {
        self.make = make
    }

    func withPrecompressor<T>(_ body: (PayloadPrecompressor) throws -> T) rethrows -> T {
        lock.lock()
        let precompressor = idle.popLast() ?? make()
        lock.unlock()
        defer {
            lock.lock()
            if idle.count < 8 { idle.append(precompressor) }
            lock.unlock()
        }
        return try body(precompressor)
    }
}

extension EventStore {
    /// `events` with their payloads compressed on the calling thread (see `PayloadPrecompressor`): the
    /// writer then stores those bytes unless its dictionary changed meanwhile.
    package func precompressed(_ events: [NewEvent]) -> [NewEvent] {
        precompressors.withPrecompressor { precompressor in
            events.map { event in
                var event = event
                if event.precompressed == nil { event.precompressed = precompressor.compress(event.payload) }
                return event
            }
        }
    }
}
