import Foundation
import HealthModel
import Projections
import ResearchBundle
import Vault

/// Feeds bundle files, as a researcher receives them, to `BundleReader.open` (`vaultctl bundle open`).
///
/// Promises checked: a refused bundle writes nothing (no output directory, no staging directory
/// left beside it); an opened one wrote exactly the files it lists, under the output directory.
final class BundleFileHarness: FuzzHarness {
    private let workspace: FuzzWorkspace
    let keyFile: String
    private var runs = 0

    init(workspace path: String) throws {
        workspace = FuzzWorkspace(path: path)
        keyFile = workspace.path + "/lab.key"
        try FuzzKeys.writeRecipientKeyFiles(prefix: workspace.path + "/lab")
    }

    /// A real export: two days of steps and heart rate, raw and daily, to the harness's fixed recipient key.
    func seeds() throws -> [FuzzSeed] {
        let vault = try workspace.freshVault()
        let csv = """
            type,start,end,value,unit,source
            steps,2025-08-06 08:00,2025-08-06 09:00,38,count,Phone
            steps,2025-08-07 08:00,2025-08-07 09:00,12,count,Watch
            heart-rate,2025-08-06 08:00,2025-08-06 08:00,61,count/min,Watch

            """
        _ = try vault.importFiles([try workspace.write(Array(csv.utf8), to: "seed.csv")], timeZone: TimeZone(identifier: "UTC")!)
        try vault.addRecipient(name: "lab", publicKeyFile: workspace.path + "/lab.pub")
        try vault.grant(recipient: "lab", categories: [.activity], from: nil, to: nil, granularity: .raw, expires: nil, purpose: "fuzz")
        try vault.grant(recipient: "lab", categories: [.heart], from: nil, to: nil, granularity: .daily, expires: nil, purpose: nil)
        let path = workspace.path + "/seed.hvb"
        try? FileManager.default.removeItem(atPath: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try vault.export(to: "lab", path: path, today: LocalDay(year: 2025, month: 8, day: 10))
        return [FuzzSeed(name: "activity-raw-heart-daily.hvb", bytes: try workspace.read("seed.hvb"))]
    }

    func run(_ input: [UInt8]) throws -> FuzzOutcome {
        try open(try workspace.write(input, to: "received.hvb"))
    }

    /// Opens the bundle at `path` into a fresh directory and checks what was written.
    func open(_ path: String) throws -> FuzzOutcome {
        runs += 1
        let output = workspace.path + "/opened-\(runs)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        do {
            let opened = try BundleReader.open(path, keyFile: keyFile, outputDirectory: output)
            let written = try filesBelow(output)
            guard written == Set(opened.files) else {
                throw FuzzInvariantViolation("an opened bundle listed \(opened.files.sorted()) but wrote \(written.sorted())")
            }
            return .accepted
        } catch let violation as FuzzInvariantViolation {
            throw violation
        } catch {
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: workspace.path).filter { $0.hasPrefix("opened-\(runs)") }
            guard leftovers.isEmpty else {
                throw FuzzInvariantViolation("a refused bundle left \(leftovers) behind (\(error))")
            }
            return .refused("\(error)")
        }
    }

    private func filesBelow(_ directory: String) throws -> Set<String> {
        var files: Set<String> = []
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return files }
        while let relative = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.insert(relative)
            }
        }
        return files
    }
}
