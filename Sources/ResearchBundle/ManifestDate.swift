import Foundation

/// A manifest's `createdAt`: ISO 8601 in UTC to the second (`2026-11-27T09:30:00Z`), exactly as
/// `BundleDraft` writes it. Anything else, trailing bytes included (which Foundation's parser
/// lets through), is refused.
public enum ManifestDate {
    public static func parse(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        guard text.utf8.count == 20, let date = formatter.date(from: text), formatter.string(from: date) == text else { return nil }
        return date
    }
}
