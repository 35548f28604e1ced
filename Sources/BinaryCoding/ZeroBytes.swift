extension Array where Element == UInt8 {
    /// Appends `count` zero bytes (room that a cipher then writes into), copied from a static
    /// block of zeros: a `memcpy` in a debug build too, where
    /// `append(contentsOf: repeatElement(0, count:))` ran a generic loop per byte (about 190 ms
    /// a MiB, measured) and made the tests' frame sealing and bundle decryption most of their time.
    public mutating func appendZeros(_ count: Int) {
        guard count > 0 else { return }
        let needed = self.count + count
        if capacity < needed { reserveCapacity(Swift.max(needed, capacity * 2)) }
        var left = count
        zeroBlock.withUnsafeBufferPointer { zeros in
            while left > 0 {
                let step = Swift.min(left, zeros.count)
                append(contentsOf: UnsafeBufferPointer(rebasing: zeros[..<step]))
                left -= step
            }
        }
    }
}

/// 64 KiB of zeros, the source of `appendZeros`.
private let zeroBlock = [UInt8](repeating: 0, count: 1 << 16)
