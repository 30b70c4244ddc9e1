/// Lends an element of a buffer to a closure without copying it.
///
/// Passing `buffer[index]` (of an array or a buffer pointer) to a closure the optimizer cannot see into copies the
/// element, because nothing proves the memory unchanged during the call: every reference the element holds is
/// retained for the call and released after. For an event (stream, id, payload, hash) that was a fifth of a
/// sealed scan's CPU. Here the element is moved out for the call and moved back after, so it is never copied.
/// The buffer must not be read during the call (the slot is uninitialized meanwhile): the caller owns it alone.
enum Lending {
    @inline(__always)
    static func with<Element, Result>(
        _ buffer: UnsafeMutableBufferPointer<Element>, at index: Int, _ body: (Element) throws -> Result
    ) rethrows -> Result {
        precondition(buffer.indices.contains(index))
        let slot = buffer.baseAddress! + index
        let element = slot.move()
        defer { slot.initialize(to: element) }
        return try body(element)
    }
}
