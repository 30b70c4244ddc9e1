/// Values filed by slot (a sealed segment's position − its first) as the segment's blocks are decoded, stream
/// by stream, then taken out in slot order: each value moved in once and out once, never copied or sorted
/// (`RawSegment.lend`). Sorting pairs of positions and generic values, then copying each out to its reader, was
/// a fifth of a rebuild's samples.
///
/// `@unchecked Sendable`: it has one owner at a time (the reader thread that fills it, then the scan's caller
/// that empties it), handed over through `BoundedPipeline`.
final class SlotBuffer<Value>: @unchecked Sendable {
    let count: Int
    private let base: UnsafeMutablePointer<Value>
    private var filled: [Bool]
    /// Slots before this one have been taken out.
    private(set) var taken = 0

    init(count: Int) {
        self.count = count
        base = .allocate(capacity: max(count, 1))
        filled = [Bool](repeating: false, count: count)
    }

    deinit {
        for slot in taken..<count where filled[slot] { (base + slot).deinitialize(count: 1) }
        base.deallocate()
    }

    /// Files `value` at `slot`; false (and `value` dropped) when the slot is outside the buffer or already filled.
    func put(_ value: consuming Value, at slot: Int) -> Bool {
        guard slot >= 0, slot < count, !filled[slot] else { return false }
        (base + slot).initialize(to: value)
        filled[slot] = true
        return true
    }

    /// The first slot nothing was filed at, or nil when every one holds a value.
    var firstEmpty: Int? { filled.firstIndex(of: false) }

    /// Moves the value of slot `taken` out (every slot must be filled: check `firstEmpty` first).
    func take() -> Value {
        precondition(taken < count && filled[taken], "SlotBuffer.take past its values")
        defer { taken += 1 }
        return (base + taken).move()
    }
}
