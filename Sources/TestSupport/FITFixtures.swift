import Foundation

/// The real FIT files in `Tests/Fixtures/fit` and what Garmin's FIT SDK for Python read from
/// each (`oracle.json`, made by `scripts/fit-oracle.py`): the decoder's tests and the import's
/// compare with it.
public enum FITFixtures {
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tests/Fixtures/fit").path

    /// The SDK's figures, by file (read each time: a JSON object is not Sendable).
    public static var oracle: [String: [String: Any]] {
        let data = try! Data(contentsOf: URL(fileURLWithPath: directory + "/oracle.json"))
        return (try! JSONSerialization.jsonObject(with: data) as! [String: Any])["files"] as! [String: [String: Any]]
    }

    /// The path of fixture `name`.
    public static func path(_ name: String) -> String { directory + "/" + name }
}
