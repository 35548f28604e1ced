import BinaryCoding

/// Splits a bundle's plaintext into its entries (`name length u16 || name || length u64 ||
/// bytes`, docs/bundle-format.md) as it arrives, chunk by chunk, so that no entry has to be held
/// whole: an entry's bytes are handed on in the pieces the chunks cut them into.
struct BundleEntryStream {
    enum Event {
        /// An entry starts: its name and how many bytes it holds.
        case begin(name: String, length: UInt64)
        /// The next bytes of the current entry.
        case bytes(ArraySlice<UInt8>)
        /// The current entry is complete.
        case end
    }

    private enum State {
        case nameLength
        case name(length: Int)
        case entryLength(name: String)
        case body(remaining: UInt64)
    }

    private var state = State.nameLength
    /// Bytes of a field that a chunk boundary cut.
    private var field: [UInt8] = []

    /// Whether the plaintext so far ends between entries.
    var isAtEntryBoundary: Bool {
        if case .nameLength = state { return field.isEmpty }
        return false
    }

    /// Feeds the next plaintext bytes; `handle` gets the entries' events in order.
    mutating func feed(_ bytes: ArraySlice<UInt8>, _ handle: (Event) throws -> Void) rethrows {
        var rest = bytes
        while !rest.isEmpty {
            switch state {
            case .nameLength:
                guard let value = take(2, from: &rest) else { return }
                let length = Int(UInt16(littleEndianBytes: value)!)
                state = .name(length: length)
            case .name(let length):
                guard let value = take(length, from: &rest) else { return }
                state = .entryLength(name: String(decoding: value, as: UTF8.self))
            case .entryLength(let name):
                guard let value = take(8, from: &rest) else { return }
                let length = UInt64(littleEndianBytes: value)!
                try handle(.begin(name: name, length: length))
                state = .body(remaining: length)
                if length == 0 { try finishEntry(handle) }
            case .body(let remaining):
                let n = Int(min(UInt64(rest.count), remaining))
                try handle(.bytes(rest.prefix(n)))
                rest = rest.dropFirst(n)
                if remaining == UInt64(n) { try finishEntry(handle) } else { state = .body(remaining: remaining - UInt64(n)) }
            }
        }
    }

    private mutating func finishEntry(_ handle: (Event) throws -> Void) rethrows {
        state = .nameLength
        try handle(.end)
    }

    /// The `count` bytes of a field, gathered across calls; nil while more are needed.
    private mutating func take(_ count: Int, from rest: inout ArraySlice<UInt8>) -> [UInt8]? {
        let n = min(count - field.count, rest.count)
        field += rest.prefix(n)
        rest = rest.dropFirst(n)
        guard field.count == count else { return nil }
        defer { field.removeAll(keepingCapacity: true) }
        return field
    }
}
