import Foundation


/// Text from outside the program (names in a bundle, source and recipient names, file names,
/// error messages quoting them) made safe to write to a terminal: every control character but
/// tab (newline too: one line printed stays one line), DEL, the C1 controls and the bidirectional
/// overrides that can reorder what a terminal shows are written as `\u{...}` escapes, so nothing
/// printed can move the cursor, change colours, set the window title, add a line or make one
/// fingerprint look like another.
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
        case 0x09: false
        case 0x00...0x1F, 0x7F...0x9F: true
        // Bidirectional embeddings, overrides and isolates; line and paragraph separators.
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C, 0x2028, 0x2029: true
        default: false
        }
    }
}

extension TerminalText {
    /// JSON text with the characters `JSONEncoder` leaves raw but a terminal acts on (DEL, the C1
    /// controls, bidirectional overrides, line separators) written as `\uXXXX` escapes. They can
    /// only stand inside strings there, where the escape means the same character.
    static func sanitizeJSON(_ data: Data) -> Data {
        let text = String(decoding: data, as: UTF8.self)
        guard text.unicodeScalars.contains(where: needsEscape) else { return data }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                out.append(contentsOf: String(format: "\\u%04x", scalar.value).unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return Data(String(out).utf8)
    }
}
