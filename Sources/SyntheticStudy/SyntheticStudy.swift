import EventLog
import Foundation
import HealthModel
import ResearchBundle
import SyntheticHealth
import Vault

/// A generated study for tests, the demo and `vaultbench study`: participants with vaults of
/// their own (the same synthetic days, each vault its own identity), consents of four kinds and
/// the bundles they led to, plus the researcher's key and roster. Made with the test KDF, so a
/// thousand participants take minutes, not hours.
///
/// Every fourth participant, in turn: shares activity and heart raw and stays; shares activity
/// daily only (partial); shared activity raw under a consent that has since expired (one bundle,
/// no more); shared activity and heart raw, then withdrew heart (two bundles, the second one's
/// consent no longer covering the heart rows).
public struct SyntheticStudy {
    /// What the participants consent to.
    public enum Mix: String, Sendable, CaseIterable {
        /// Everyone shares activity raw, once: the plain load a study's benchmark is about.
        case rawActivity = "raw"
        /// The four kinds above in turn.
        case consentKinds = "consents"
    }

    public struct Participant {
        public var label: String
        public var vault: String
        public var fingerprint: String
        /// The bundles, oldest first.
        public var bundles: [String]
    }

    public var directory: String
    /// `lab.key` and `lab.pub`.
    public var keyPrefix: String
    /// `participant,fingerprint`.
    public var roster: String
    public var participants: [Participant]
    /// Every bundle, participant by participant, oldest first.
    public var bundles: [String] { participants.flatMap(\.bundles) }

    /// Makes `participants` participants with `days` days each under `directory` (new), their
    /// consents as `mix` says.
    public static func make(in directory: String, participants count: Int, days: Int, mix: Mix = .consentKinds,
                            passphrase: Passphrase) throws -> SyntheticStudy {
        try FileManager.default.createDirectory(atPath: directory + "/bundles", withIntermediateDirectories: true)
        let keyPrefix = directory + "/lab"
        try RecipientKeyFiles.generate(prefix: keyPrefix)
        let zip = directory + "/export.zip"
        try SyntheticExport.writeZip(to: zip, options: .init(days: days, firstDay: (2024, 1, 1), tripStart: days + 1))
        defer { try? FileManager.default.removeItem(atPath: zip) }
        let first = LocalDay(year: 2024, month: 1, day: 1)
        let last = LocalDay(dayNumber: first.dayNumber + Int64(days) - 1)
        // Consents and exports happen the day after the data ends, so expiry can be shown.
        let then = Date(timeIntervalSince1970: TimeInterval((last.dayNumber + 1) * 86_400 + 12 * 3600))
        let thenDay = LocalDay(dayNumber: last.dayNumber + 1)
        var participants: [Participant] = []
        for i in 0..<count {
            let label = String(format: "P-%04d", i + 1)
            let path = directory + "/vaults/" + label
            try FileManager.default.createDirectory(atPath: directory + "/vaults", withIntermediateDirectories: true)
            let vault = try Vault.create(at: path, passphrase: passphrase, kdf: .minimumForTesting, kdfName: "test", now: then)
            _ = try vault.importFiles([zip], timeZone: TimeZone(identifier: "Europe/Berlin")!)
            try vault.addRecipient(name: "lab", publicKeyFile: keyPrefix + ".pub", now: then)
            var bundles: [String] = []
            func export(_ n: Int, at day: LocalDay) throws {
                let bundle = directory + "/bundles/\(label)-\(n).bundle"
                _ = try vault.export(to: "lab", path: bundle, now: then.addingTimeInterval(Double(n)), today: day)
                bundles.append(bundle)
            }
            if mix == .rawActivity {
                _ = try vault.grant(recipient: "lab", categories: [.activity], from: first, to: last, granularity: .raw,
                                    expires: nil, purpose: "synthetic study", now: then)
                try export(1, at: thenDay)
                participants.append(Participant(label: label, vault: path, fingerprint: try vault.identity().fingerprint, bundles: bundles))
                continue
            }
            switch i % 4 {
            case 0:
                _ = try vault.grant(recipient: "lab", categories: [.activity, .heart], from: first, to: last, granularity: .raw,
                                    expires: nil, purpose: "synthetic study", now: then)
                try export(1, at: thenDay)
            case 1:
                _ = try vault.grant(recipient: "lab", categories: [.activity], from: first, to: last, granularity: .daily,
                                    expires: nil, purpose: "synthetic study", now: then)
                try export(1, at: thenDay)
            case 2:
                _ = try vault.grant(recipient: "lab", categories: [.activity], from: first, to: last, granularity: .raw,
                                    expires: thenDay, purpose: "synthetic study", now: then)
                try export(1, at: thenDay)
            default:
                _ = try vault.grant(recipient: "lab", categories: [.activity, .heart], from: first, to: last, granularity: .raw,
                                    expires: nil, purpose: "synthetic study", now: then)
                try export(1, at: thenDay)
                try vault.revoke(recipient: "lab", categories: [.heart], now: then.addingTimeInterval(1.5))
                try export(2, at: thenDay)
            }
            participants.append(Participant(label: label, vault: path, fingerprint: try vault.identity().fingerprint, bundles: bundles))
        }
        let roster = directory + "/roster.csv"
        let lines = ["participant,fingerprint"] + participants.map { "\($0.label),\($0.fingerprint)" }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: roster))
        return SyntheticStudy(directory: directory, keyPrefix: keyPrefix, roster: roster, participants: participants)
    }
}
