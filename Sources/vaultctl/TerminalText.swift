import HealthModel

/// Text from outside the program (names in a bundle, source and recipient names, file names,
/// error messages quoting them) made safe to write to a terminal: every control character but
/// newline and tab, DEL, the C1 controls and the bidirectional overrides that can reorder what a
/// terminal shows are written as `\u{...}` escapes, so nothing printed can move the cursor, change
/// colours, set the window title or make one fingerprint look like another.
enum TerminalText {
    static func sanitize(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                out.append(contentsOf: "\\u{\(String(scalar.value, radix: 16))}".unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: false
        case 0x00...0x1F, 0x7F...0x9F: true
        // Bidirectional embeddings, overrides and isolates; line and paragraph separators.
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C, 0x2028, 0x2029: true
        default: false
        }
    }
}
