/// Values filed by slot (a sealed segment's position − its first) as the segment's blocks are decoded, stream
/// by stream, then taken out in slot order: each value moved in once and out once, never copied or sorted
/// (`RawSegment.lend`). Sorting pairs of positions and generic values, then copying each out to its reader, was
/// a fifth of a rebuild's samples.
///
/// `@unchecked Sendable`: it has one owner at a time (the reader thread that fills it, then the scan's caller
/// that empties it), handed over through `BoundedPipeline`.
final class SlotBuffer<Value>: @unchecked Sendable {
    let count: Int
    // Every mutable part lives behind a pointer, not in a `var` of the class: a class's stored `var` is checked
    // for exclusive access at run time on each mutation (`swift_beginAccess`/`endAccess`, ~3 % of a sealed
    // rebuild when `filled` and `taken` were vars).
    private let base: UnsafeMutablePointer<Value>
    private let filled: UnsafeMutablePointer<Bool>
    private let cursor: UnsafeMutablePointer<Int>

    init(count: Int) {
        self.count = count
        base = .allocate(capacity: max(count, 1))
        filled = .allocate(capacity: max(count, 1))
        filled.initialize(repeating: false, count: max(count, 1))
        cursor = .allocate(capacity: 1)
        cursor.initialize(to: 0)
    }

    deinit {
        for slot in taken..<count where filled[slot] { (base + slot).deinitialize(count: 1) }
        base.deallocate()
        filled.deallocate()
        cursor.deallocate()
    }

    /// Slots before this one have been taken out.
    var taken: Int { cursor.pointee }

    /// Files `value` at `slot`; false (and `value` dropped) when the slot is outside the buffer or already filled.
    func put(_ value: consuming Value, at slot: Int) -> Bool {
        guard slot >= 0, slot < count, !filled[slot] else { return false }
        (base + slot).initialize(to: value)
        filled[slot] = true
        return true
    }

    /// The first slot nothing was filed at, or nil when every one holds a value.
    var firstEmpty: Int? { (0..<count).first { !filled[$0] } }

    /// Moves the value of slot `taken` out (every slot must be filled: check `firstEmpty` first).
    func take() -> Value {
        let slot = cursor.pointee
        precondition(slot < count && filled[slot], "SlotBuffer.take past its values")
        cursor.pointee = slot + 1
        return (base + slot).move()
    }
}
