import Foundation
import ResearchBundle

/// The participants a study expects (`--roster FILE`): a CSV of `participant,fingerprint`
/// (a header line naming those columns may come first). Bundles from anyone else are refused.
public struct StudyRoster: Sendable {
    /// Participant labels by normalized fingerprint (hex digits, lower case).
    public private(set) var labels: [String: String] = [:]

    public init(labels: [String: String]) {
        for (fingerprint, label) in labels { self.labels[Fingerprint.normalized(fingerprint)] = label }
    }

    /// Reads `path`; names the file and line of anything malformed.
    public init(contentsOf path: String) throws {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw StudyError.roster(path: path, line: 0, reason: "cannot be read as UTF-8 text")
        }
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty { continue }
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            if index == 0, fields.first?.lowercased() == "participant" { continue }
            guard fields.count == 2, !fields[0].isEmpty else {
                throw StudyError.roster(path: path, line: index + 1, reason: "expected two fields: participant,fingerprint")
            }
            let fingerprint = Fingerprint.normalized(fields[1])
            guard fingerprint.count == 32 else {
                throw StudyError.roster(path: path, line: index + 1, reason: "the fingerprint is not one `vaultctl identity` prints")
            }
            guard labels[fingerprint] == nil else {
                throw StudyError.roster(path: path, line: index + 1, reason: "the fingerprint is listed twice")
            }
            labels[fingerprint] = fields[0]
        }
    }

    /// The label of `fingerprint`, nil when it is not on the roster.
    public func label(of fingerprint: String) -> String? { labels[Fingerprint.normalized(fingerprint)] }
}
