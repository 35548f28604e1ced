/// Elements moved in at the end and moved out at the front, in order, never copied.
///
/// An `Array` hands its elements out as copies (each of a sample's strings and its source
/// retained, and released again when the array is emptied) or has them swapped out for a
/// placeholder it then destroys: ~260 instructions a sample on the import's path, measured
/// (docs/benchmarks-history.md). A batch of samples handed between threads, and the samples an
/// import session holds until their identities are decided, go through one of these.
///
/// One thread's at a time, so its counts are not checked for exclusive access at run time (a
/// check on every sample moved in and out); what was not taken is destroyed with `removeAll` or
/// the buffer.
public final class MovingBuffer<Element> {
    @usableFromInline let storage: UnsafeMutablePointer<Element>
    /// How many elements it holds at most.
    public let capacity: Int
    @usableFromInline @exclusivity(unchecked) var moved = 0
    @usableFromInline @exclusivity(unchecked) var movedOut = 0

    /// Elements moved in; those before `taken` were moved out again.
    @inlinable public var count: Int { moved }
    @inlinable public var taken: Int { movedOut }

    public init(capacity: Int) {
        self.capacity = capacity
        storage = .allocate(capacity: capacity)
    }

    deinit {
        removeAll()
        storage.deallocate()
    }

    /// Whether no more element can be moved in.
    @inlinable public var isFull: Bool { moved == capacity }

    /// Moves `element` in at the end (the buffer must not be full).
    @inlinable
    public func append(_ element: consuming Element) {
        precondition(moved < capacity, "moving buffer full")
        (storage + moved).initialize(to: element)
        moved += 1
    }

    /// Moves the first element not yet taken out (there must be one).
    @inlinable
    public func takeNext() -> Element {
        precondition(movedOut < moved, "no element left to take")
        defer { movedOut += 1 }
        return (storage + movedOut).move()
    }

    /// Destroys what was not taken and empties the buffer for reuse.
    public func removeAll() {
        (storage + movedOut).deinitialize(count: moved - movedOut)
        moved = 0
        movedOut = 0
    }
}
