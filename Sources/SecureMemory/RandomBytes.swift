/// Random bytes from the operating system's CSPRNG (libsodium `randombytes_buf`), for values
/// that are not secret: nonces, salts, vault and consent ids, the random part of temporary names.
/// Secrets come from `SecretKey.random()` or `SecureBytes`, never from here.
public enum RandomBytes {
    public static func make(_ count: Int) -> [UInt8] { Sodium.randomBytes(count) }
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
