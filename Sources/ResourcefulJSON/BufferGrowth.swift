extension UnsafeMutablePointer {
    /// Storage of twice `capacity` holding the first `count` elements moved from `self`, whose
    /// storage is freed; and that capacity. The tapes and the quote list grow this way.
    @inline(__always)
    func doubled(count: Int, capacity: Int) -> (UnsafeMutablePointer<Pointee>, Int) {
        let grown = UnsafeMutablePointer<Pointee>.allocate(capacity: capacity * 2)
        // In bounds: `count` <= `capacity` initialised elements move into twice that room.
        grown.moveInitialize(from: self, count: count)
        deallocate()
        return (grown, capacity * 2)
    }
}
