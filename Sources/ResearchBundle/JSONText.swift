import Foundation

/// JSON text as the bundle's data lines write it: the writer (the vault's export) and the
/// readers (study load, which writes a line's other members back as a JSON object) use the one
/// escaping.
public enum JSONText {
    /// A JSON string literal: quotes, backslashes and control characters escaped, everything
    /// else as is (UTF-8).
    public static func literal(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
