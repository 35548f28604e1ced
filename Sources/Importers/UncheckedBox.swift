/// Carries a value that is used by one thread at a time to a producer thread.
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
}
