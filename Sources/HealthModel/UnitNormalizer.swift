import Foundation

/// Units that change with the exporting phone's locale (Cal, kcal and kJ; km and mi; lb and kg;
/// degF and degC) become one canonical unit per dimension on import, so that the same sample
/// exported under two locales is the same sample. Units not listed are kept as written.
///
/// Canonical units: energy `kcal`, length `m`, mass `kg`, time `min`, temperature `degC`,
/// volume `mL`. The table is docs/health-model.md's.
public enum UnitNormalizer {
    public enum Factor: Equatable, Sendable {
        case identity
        case powerOfTen(Int)
        /// canonical = value × multiply + add
        case linear(multiply: Double, add: Double)

        /// A binary value converted (`DecimalValue.scaled(by:)` keeps exact decimals exact).
        public func applied(to value: Double) -> Double {
            switch self {
            case .identity: value
            case .powerOfTen(let exponent): value * pow(10, Double(exponent))
            case .linear(let multiply, let add): value * multiply + add
            }
        }
    }

    /// Canonical unit and conversion for a unit as written, or nil to keep it unchanged.
    public static func canonical(for unit: String) -> (unit: String, factor: Factor)? {
        table[unit]
    }

    private static let table: [String: (String, Factor)] = [
        // energy
        "kcal": ("kcal", .identity), "Cal": ("kcal", .identity), "cal": ("kcal", .powerOfTen(-3)),
        "kJ": ("kcal", .linear(multiply: 1 / 4.184, add: 0)), "J": ("kcal", .linear(multiply: 1 / 4184, add: 0)),
        // length
        "m": ("m", .identity), "km": ("m", .powerOfTen(3)), "cm": ("m", .powerOfTen(-2)), "mm": ("m", .powerOfTen(-3)),
        "mi": ("m", .linear(multiply: 1609.344, add: 0)), "ft": ("m", .linear(multiply: 0.3048, add: 0)),
        "in": ("m", .linear(multiply: 0.0254, add: 0)), "yd": ("m", .linear(multiply: 0.9144, add: 0)),
        // mass
        "kg": ("kg", .identity), "g": ("kg", .powerOfTen(-3)), "mg": ("kg", .powerOfTen(-6)),
        "lb": ("kg", .linear(multiply: 0.45359237, add: 0)), "oz": ("kg", .linear(multiply: 0.028349523125, add: 0)),
        "st": ("kg", .linear(multiply: 6.35029318, add: 0)),
        // time
        "min": ("min", .identity), "s": ("min", .linear(multiply: 1.0 / 60, add: 0)), "hr": ("min", .linear(multiply: 60, add: 0)),
        // rates (iOS 8 wrote heart rate per second)
        "count/min": ("count/min", .identity), "count/s": ("count/min", .linear(multiply: 60, add: 0)),
        // temperature
        "degC": ("degC", .identity), "degF": ("degC", .linear(multiply: 5.0 / 9, add: -160.0 / 9)),
        // volume
        "mL": ("mL", .identity), "L": ("mL", .powerOfTen(3)), "fl_oz_us": ("mL", .linear(multiply: 29.5735295625, add: 0)),
        "fl_oz_imp": ("mL", .linear(multiply: 28.4130625, add: 0)), "cup_us": ("mL", .linear(multiply: 236.5882365, add: 0)),
    ]
}
