/// The unit a person reads a type in, where it differs from the unit the vault stores.
///
/// Samples are stored as imported, in the canonical unit of their dimension (`UnitNormalizer`):
/// masses in kg, so that an export made under another locale is the same sample. People read
/// nutrients as the Health app shows them: macronutrients in g, most vitamins and minerals in
/// mg, a few in µg (`mcg`). Blood glucose written as `mmol<180.1558800000541>/L` (Apple's form,
/// molar mass inside) reads in mg/dL, so that it is one series with readings written in mg/dL.
/// Read models, summaries, `types` and bundles use these units (docs/health-model.md).
public enum ReadingUnits {
    /// The reading unit of `type` stored in `unit`, with the factor from stored to read values
    /// (exact powers of ten for masses); nil when they are the same.
    public static func reading(type: String, unit: String) -> (unit: String, factor: UnitNormalizer.Factor)? {
        if unit == "kg", let target = nutrientUnits[type] {
            switch target {
            case "g": return ("g", .powerOfTen(3))
            case "mg": return ("mg", .powerOfTen(6))
            default: return ("mcg", .powerOfTen(9))
            }
        }
        if let molarMass = molarMass(unit) {
            // mmol/L × g/mol = mg/L; / 10 = mg/dL.
            return ("mg/dL", .linear(multiply: molarMass / 10, add: 0))
        }
        return nil
    }

    /// The molar mass in `mmol<M>/L`; nil for any other unit.
    static func molarMass(_ unit: String) -> Double? {
        guard unit.hasPrefix("mmol<"), unit.hasSuffix(">/L") else { return nil }
        let inside = unit.dropFirst(5).dropLast(3)
        guard let mass = Double(inside), mass.isFinite, mass > 0, mass < 1e6 else { return nil }
        return mass
    }

    private static let prefix = "HKQuantityTypeIdentifierDietary"

    /// Apple's display unit of each dietary type stored as a mass.
    private static let nutrientUnits: [String: String] = {
        var table: [String: String] = [:]
        for name in ["Carbohydrates", "Protein", "FatTotal", "FatSaturated", "FatMonounsaturated", "FatPolyunsaturated", "Fiber", "Sugar"] {
            table[prefix + name] = "g"
        }
        for name in ["Cholesterol", "Sodium", "Caffeine", "Calcium", "Chloride", "Copper", "Iron", "Magnesium", "Manganese", "Niacin",
                     "PantothenicAcid", "Phosphorus", "Potassium", "Riboflavin", "Thiamin", "VitaminB6", "VitaminC", "VitaminE", "Zinc"] {
            table[prefix + name] = "mg"
        }
        for name in ["Biotin", "Chromium", "Folate", "Iodine", "Molybdenum", "Selenium", "VitaminA", "VitaminB12", "VitaminD", "VitaminK"] {
            table[prefix + name] = "mcg"
        }
        return table
    }()
}
