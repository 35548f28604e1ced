import CSodium

/// BLAKE2b-256 (libsodium `crypto_generichash`), incrementally. The state is aligned storage
/// that libsodium's opaque state type needs; `finish` releases it.
public struct Digest {
    private let raw: UnsafeMutableRawPointer
    private var state: OpaquePointer { OpaquePointer(raw) }

    public init() {
        _ = sodium_init()
        raw = UnsafeMutableRawPointer.allocate(byteCount: crypto_generichash_statebytes(), alignment: 64)
        _ = crypto_generichash_init(state, nil, 0, 32)
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        _ = crypto_generichash_update(state, base.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
    }

    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    public mutating func finish() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        _ = crypto_generichash_final(state, &out, 32)
        raw.deallocate()
        return out
    }

    /// The hash of `bytes`.
    public static func of(_ bytes: [UInt8]) -> [UInt8] {
        var d = Digest()
        d.update(bytes)
        return d.finish()
    }
}

extension Array where Element == UInt8 {
    /// Lowercase hex.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(count * 2)
        for b in self {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
