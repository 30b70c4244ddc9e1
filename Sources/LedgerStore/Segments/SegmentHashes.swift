import Synchronization

/// Chain hashes of recently read segments, by first position.
///
/// A sealed event's hash is not stored (only a 2-byte check value), and computing it needs every event of its
/// segment before it, whatever their stream. A point read that wants hashes (a timeline, an event by id) hashes
/// the segment once (`RawSegment.chainHashes`); later reads of the same segment find its hashes here. Sealing puts
/// in the hashes of each segment it writes (its rows had them), so a `serve` that seals in the background answers
/// recent timelines without decoding. A segment never changes once committed, and its hashes are a function of
/// the logical events, so an entry never goes stale; at most `capacity` segments are kept, each as one flat array
/// (4096 events × 32 bytes: 32 MiB for 256, every segment of a million-event ledger).
final class SegmentHashes: Sendable {
    private struct Entries {
        var hashes: [Int64: [UInt8]] = [:]
        var order: [Int64] = []
    }

    private let entries = Mutex(Entries())
    private let capacity: Int

    init(capacity: Int = 256) {
        self.capacity = capacity
    }

    /// The segment's hashes back to back, 32 bytes for each position from `first`.
    func hashes(of first: Int64) -> [UInt8]? {
        entries.withLock { $0.hashes[first] }
    }

    func store(_ hashes: [UInt8], of first: Int64) {
        entries.withLock { entries in
            guard entries.hashes.updateValue(hashes, forKey: first) == nil else { return }
            entries.order.append(first)
            if entries.order.count > capacity {
                entries.hashes[entries.order.removeFirst()] = nil
            }
        }
    }
}
