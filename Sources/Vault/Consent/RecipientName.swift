import Foundation

/// Recipient names are how a person tells researchers apart when granting and exporting, so two
/// names that look the same (`Sleep Lab`, `sleep  lab`, `Sleеp Lab` with a Cyrillic `е`,
/// full-width letters) must not name two recipients, and a name may not hide characters.
enum RecipientName {
    /// What a name looks like: compatibility-normalized (NFKC: full-width and ligatures become
    /// plain letters), case-folded, diacritics removed, Cyrillic and Greek letters that look Latin
    /// mapped to it, `0`/`1` to `o`/`l`, and runs of spaces and punctuation-free separators folded.
    static func skeleton(_ name: String) -> String {
        let folded = name.precomposedStringWithCompatibilityMapping
            .folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        var out = String.UnicodeScalarView()
        var lastWasSpace = false
        for scalar in folded.unicodeScalars {
            // Every dash (hyphen, non-breaking hyphen, en dash, minus, ...) reads as a separator.
            if scalar.properties.isWhitespace || scalar == "_" || scalar == "." || scalar.properties.generalCategory == .dashPunctuation
                || scalar == "\u{2212}" {
                if !lastWasSpace, !out.isEmpty { out.append(" ") }
                lastWasSpace = true
                continue
            }
            lastWasSpace = false
            out.append(lookalikes[scalar] ?? scalar)
        }
        return String(out).trimmingCharacters(in: .whitespaces)
    }

    /// Control characters, format characters (zero-width, direction marks and overrides) and
    /// other default-ignorable code points.
    static func hasInvisibleCharacters(_ name: String) -> Bool {
        name.unicodeScalars.contains { scalar in
            scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format
                || scalar.properties.isDefaultIgnorableCodePoint
        }
    }

    /// Letters of other scripts, and digits, that are drawn like a Latin letter (lowercase, as
    /// after case folding): the common part of Unicode's confusables for names.
    private static let lookalikes: [Unicode.Scalar: Unicode.Scalar] = {
        let pairs: [(String, String)] = [
            ("а", "a"), ("в", "b"), ("е", "e"), ("ё", "e"), ("к", "k"), ("м", "m"), ("н", "h"), ("о", "o"), ("р", "p"),
            ("с", "c"), ("т", "t"), ("у", "y"), ("х", "x"), ("ѕ", "s"), ("і", "i"), ("ј", "j"), ("һ", "h"), ("ԁ", "d"),
            ("α", "a"), ("β", "b"), ("ε", "e"), ("ι", "i"), ("κ", "k"), ("ν", "v"), ("ο", "o"), ("ρ", "p"), ("τ", "t"),
            ("υ", "u"), ("χ", "x"), ("γ", "y"), ("0", "o"), ("1", "l"), ("ı", "l"), ("ℓ", "l"),
            // Latin-extended and Cyrillic letters drawn like a Latin one (found in review: `Sleep Laƅ`).
            ("ƅ", "b"), ("ь", "b"), ("ƃ", "b"), ("ɓ", "b"), ("ɗ", "d"), ("ɡ", "g"), ("ɑ", "a"), ("ɩ", "l"), ("ǀ", "l"), ("ӏ", "l"),
            ("ѵ", "v"), ("ԝ", "w"), ("ԛ", "q"), ("ɵ", "o"), ("ꮯ", "c"),
            // A capital I and a small l are one stroke in most fonts; after case folding the I is i.
            ("i", "l"),
        ]
        return Dictionary(uniqueKeysWithValues: pairs.map { ($0.0.unicodeScalars.first!, $0.1.unicodeScalars.first!) })
    }()
}
