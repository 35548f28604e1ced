import Foundation

/// A numeric value kept exactly as the export wrote it when that is possible (a decimal with at
/// most 15 significant digits), so that re-importing the same file yields bit-identical events.
public struct DecimalValue: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// value = mantissa × 10^-scale when `exact`, else `double`.
    public var mantissa: Int64
    public var scale: UInt8
    public var exact: Bool
    public var double: Double

    @inlinable
    public init(mantissa: Int64, scale: UInt8) {
        self.mantissa = mantissa
        self.scale = scale
        self.exact = true
        self.double = Double(mantissa) / Self.powerOfTen(min(scale, 18))
    }

    /// 10^n for n in 0...18, exactly (every one is a double without rounding); inlinable, with no
    /// global table behind it to initialise on every call from another module.
    @inlinable
    static func powerOfTen(_ n: UInt8) -> Double {
        var result = 1.0
        for _ in 0..<n { result *= 10 }
        return result
    }

    @inlinable
    public init(double: Double) {
        self.mantissa = 0
        self.scale = 0
        self.exact = false
        self.double = double
    }

    public var description: String { exact && scale == 0 ? String(mantissa) : String(double) }

    /// Parses a plain decimal (`-12.5`, `3`, `1e3`); `nil` for anything else, NaN and infinity.
    public static func parse(_ b: UnsafeRawBufferPointer) -> DecimalValue? {
        var i = 0
        var negative = false
        if i < b.count, b[i] == 0x2D || b[i] == 0x2B { negative = b[i] == 0x2D; i += 1 }
        var mantissa: Int64 = 0
        var digits = 0
        var scale = 0
        var sawDigit = false
        var sawPoint = false
        var overflow = false
        while i < b.count {
            let c = b[i]
            if c >= 0x30 && c <= 0x39 {
                sawDigit = true
                if digits < 15 {
                    if mantissa > 0 || c != 0x30 { digits += 1 }
                    mantissa = mantissa * 10 + Int64(c - 0x30)
                    if sawPoint { scale += 1 }
                } else {
                    overflow = true
                    if !sawPoint { scale -= 1 }
                }
            } else if c == 0x2E && !sawPoint {
                sawPoint = true
            } else {
                break
            }
            i += 1
        }
        guard sawDigit else { return nil }
        if i < b.count {
            // An exponent, or junk.
            guard b[i] == 0x65 || b[i] == 0x45 else { return nil }
            return parseWithStrtod(b)
        }
        if overflow || scale < 0 || scale > 18 { return parseWithStrtod(b) }
        var value = DecimalValue(mantissa: negative ? -mantissa : mantissa, scale: UInt8(scale))
        value.normalize()
        return value
    }

    private static func parseWithStrtod(_ b: UnsafeRawBufferPointer) -> DecimalValue? {
        guard b.count < 64 else { return nil }
        var text = [CChar](repeating: 0, count: b.count + 1)
        for i in 0..<b.count { text[i] = CChar(bitPattern: b[i]) }
        let (value, consumed) = text.withUnsafeMutableBufferPointer { buffer -> (Double, Int) in
            var end: UnsafeMutablePointer<CChar>?
            let value = strtod(buffer.baseAddress!, &end)
            return (value, end.map { $0 - buffer.baseAddress! } ?? 0)
        }
        guard consumed == b.count, value.isFinite else { return nil }
        return DecimalValue(double: value)
    }

    /// Drops trailing zeros of the fraction (`1.50` and `1.5` are the same value).
    public mutating func normalize() {
        guard exact else { return }
        while scale > 0 && mantissa % 10 == 0 {
            mantissa /= 10
            scale -= 1
        }
    }

    /// The value times a unit factor: exact when the factor is a power of ten.
    public func scaled(by factor: UnitNormalizer.Factor) -> DecimalValue {
        switch factor {
        case .identity:
            return self
        case .powerOfTen(let exponent):
            guard exact else { return DecimalValue(double: double * pow(10, Double(exponent))) }
            var result = self
            var e = exponent
            while e > 0 {
                if result.scale > 0 { result.scale -= 1 } else {
                    let (m, o) = result.mantissa.multipliedReportingOverflow(by: 10)
                    if o { return DecimalValue(double: double * pow(10, Double(exponent))) }
                    result.mantissa = m
                }
                e -= 1
            }
            while e < 0 {
                guard result.scale < 18 else { return DecimalValue(double: double * pow(10, Double(exponent))) }
                result.scale += 1
                e += 1
            }
            result.double = Double(result.mantissa) / Self.powerOfTen(result.scale)
            result.normalize()
            return result
        case .linear(let multiply, let add):
            return DecimalValue(double: double * multiply + add)
        }
    }
}
