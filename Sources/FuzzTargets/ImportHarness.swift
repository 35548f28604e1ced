import Foundation
import SyntheticHealth
import Vault
import ZIPFoundation

/// Feeds files to `Vault.importFiles`, the path `vaultctl import` takes.
///
/// Promises checked after each input:
/// - a refused file leaves the log and its head record exactly as they were, and its error
///   names the file;
/// - an accepted file leaves a vault that verifies (every event decodes), and imported again
///   adds nothing (idempotence holds for whatever parses).
final class ImportHarness: FuzzHarness {
    enum Kind {
        case appleXML, appleZip, json, csv, fit

        var fileName: String {
            switch self {
            case .appleXML: return "export.xml"
            case .appleZip: return "export.zip"
            case .json: return "samples.json"
            case .csv: return "samples.csv"
            case .fit: return "activity.fit"
            }
        }
    }

    private let workspace: FuzzWorkspace
    private let kind: Kind
    private var vault: Vault
    /// Accepted inputs grow the vault; past this size it starts again empty, so a long run stays fast.
    private static let vaultSizeLimit: Int64 = 1 << 20

    init(workspace path: String, kind: Kind) throws {
        workspace = FuzzWorkspace(path: path)
        self.kind = kind
        vault = try workspace.freshVault()
    }

    func seeds() throws -> [FuzzSeed] {
        switch kind {
        case .appleXML: return [FuzzSeed(name: "generated.xml", bytes: try generatedExport())]
        case .appleZip: return [FuzzSeed(name: "generated.zip", bytes: try zipped(try generatedExport()))]
        case .json:
            return [
                FuzzSeed(name: "steps.json", bytes: Array(#"{"metric":"STEPS","data":[{"timeRange":"2025-08-06 08:00/2025-08-06 09:00","value":38},{"timeRange":"2025-08-06 09:00/2025-08-06 10:00","value":12.5}]}"#.utf8)),
                FuzzSeed(name: "array.json", bytes: Array(#"[{"metric":"HEART_RATE","data":[{"timeRange":"2025-08-06T08:00:00+02:00/2025-08-06T08:00:00+02:00","value":61}]},{"metric":"ACTIVE_ENERGY","data":[{"timeRange":"2025-08-06 10:00/2025-08-06 10:30","value":55.5}]}]"#.utf8)),
            ]
        case .fit:
            // A minute's run, a ride, a recording without its summary and a night's sleep, as a
            // watch writes them (SyntheticFIT).
            return [FuzzSeed(name: "run.fit", bytes: SyntheticFIT.activity(start: 1_717_228_800, seconds: 60, utcOffset: 7_200)),
                    FuzzSeed(name: "ride.fit", bytes: SyntheticFIT.activity(start: 1_717_315_200, seconds: 30, utcOffset: -18_000, sport: 2, seed: 2)),
                    FuzzSeed(name: "cut-short.fit", bytes: SyntheticFIT.activity(start: 1_717_401_600, seconds: 20, utcOffset: 0, seed: 3, summary: false)),
                    FuzzSeed(name: "sleep.fit", bytes: SyntheticFIT.sleep(start: 1_717_281_000, levels: [(0, 1), (10, 2), (40, 3), (70, 4)], stopMinutes: 90))]
        case .csv:
            return [FuzzSeed(name: "samples.csv", bytes: Array("""
                type,start,end,value,unit,source
                steps,2025-08-06 08:00,2025-08-06 09:00,38,count,"Phone, old"
                heart-rate,2025-08-06T08:00:00+02:00,2025-08-06T08:00:00+02:00,61,count/min,Watch
                active-energy,2025-08-06 10:00,2025-08-06 10:30,55.5,kcal,Watch

                """.utf8))]
        }
    }

    func run(_ input: [UInt8]) throws -> FuzzOutcome {
        var before = try workspace.vaultState()
        if before.logSize > Self.vaultSizeLimit {
            vault = try workspace.freshVault()
            before = try workspace.vaultState()
        }
        let path = try workspace.write(input, to: kind.fileName)
        let first: ImportReport
        do {
            first = try vault.importFiles([path], timeZone: TimeZone(identifier: "UTC")!)
        } catch {
            guard try workspace.vaultState() == before else {
                throw FuzzInvariantViolation("a refused import changed the log (\(error))")
            }
            let message = "\(error)"
            guard message.contains(kind.fileName) else {
                throw FuzzInvariantViolation("the error does not name the file: \(message)")
            }
            return .refused(message)
        }
        let again = try vault.importFiles([path], timeZone: TimeZone(identifier: "UTC")!)
        guard again.added == 0 else {
            throw FuzzInvariantViolation("re-importing an accepted file added \(again.added) of its \(first.added) events again")
        }
        let report = try Vault.verify(at: workspace.vaultPath, passphrase: FuzzWorkspace.passphrase())
        guard report.isOK else {
            throw FuzzInvariantViolation("after an accepted import the vault does not verify: \(report.problems.joined(separator: "; "))")
        }
        return .accepted
    }

    /// About 40 kB of a generated day: every record kind the importer knows, cut short and closed.
    private func generatedExport() throws -> [UInt8] {
        let folder = workspace.path + "/generated"
        try? FileManager.default.removeItem(atPath: folder)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try SyntheticExport.writeFolder(at: folder, options: .init(days: 1, firstDay: (2024, 3, 30)))
        let full = try String(contentsOfFile: folder + "/apple_health_export/export.xml", encoding: .utf8)
        let cut = full.range(of: "\n <Record", range: full.index(full.startIndex, offsetBy: min(40_000, full.count))..<full.endIndex)?.lowerBound ?? full.endIndex
        return Array((full[..<cut] + "\n</HealthData>\n").utf8)
    }

    private func zipped(_ xml: [UInt8]) throws -> [UInt8] {
        let file = workspace.path + "/seed.zip"
        try? FileManager.default.removeItem(atPath: file)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let archive = try Archive(url: URL(fileURLWithPath: file), accessMode: .create)
        let data = Data(xml)
        try archive.addEntry(with: "apple_health_export/export.xml", type: .file, uncompressedSize: Int64(data.count),
                             compressionMethod: .deflate) { position, size in
            data.subdata(in: Int(position)..<Int(position) + size)
        }
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
    }
}
