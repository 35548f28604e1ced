import Foundation
import HealthModel
import Projections
import SecureMemory

/// Feeds files to the read models' page cipher (`projections.db`, docs/projections.md).
///
/// Each input is tried twice: as the database file itself (header, block lengths, authentication
/// of every page SQLite reads), and as a rollback journal beside the pristine database (a hot
/// journal the next connection would play back). Promises checked: a database that opens answers
/// exactly what the pristine one answers, never other data; anything else is refused as damage
/// (which the vault answers with a rebuild), never a crash; a journal nobody with the key wrote
/// changes nothing.
final class ReadModelFileHarness: FuzzHarness {
    private let workspace: FuzzWorkspace
    private let pristine: [UInt8]
    private let answers: [String]
    /// Fixed, so that files kept in the corpus open in later runs.
    private static let key = SecretKey(SecureBytes(count: SecretKey.byteCount) { $0.initializeMemory(as: UInt8.self, repeating: 0x52) })

    private var databasePath: String { workspace.path + "/models.db" }

    init(workspace path: String) throws {
        workspace = FuzzWorkspace(path: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try? ReadModels.removeFiles(at: workspace.path + "/models.db")
        do {
            let models = try ReadModels(path: workspace.path + "/models.db", key: Self.key)
            try models.update { update in
                let watch = SourceKey(name: "Fuzz Watch", deviceClass: .watch)
                for day in 0..<40 {
                    let start = Int64(1_706_745_600 + day * 86_400)
                    for hour in stride(from: 8, to: 20, by: 2) {
                        try update.add(.cumulative(CumulativeSample(
                            metric: "HKQuantityTypeIdentifierStepCount", unit: "count", source: watch,
                            start: start + Int64(hour * 3600), end: start + Int64(hour * 3600 + 600), utcOffset: 3600, value: Double(300 + day))))
                    }
                }
                return [1]
            }
        }
        pristine = try workspace.read("models.db")
        answers = try Self.answers(try ReadModels(path: workspace.path + "/models.db", key: Self.key))
    }

    static func answers(_ models: ReadModels) throws -> [String] {
        try models.rings().map { "\($0)" } + models.query("SELECT * FROM daily ORDER BY metric_id, day").rows.map { "\($0)" }
    }

    func seeds() throws -> [FuzzSeed] {
        [FuzzSeed(name: "forty-days.db", bytes: pristine)]
    }

    func run(_ input: [UInt8]) throws -> FuzzOutcome {
        let asFile = try open(database: input, journal: nil)
        if asFile.isAccepted == false, input == pristine {
            throw FuzzInvariantViolation("the pristine read-model file was refused: \(asFile)")
        }
        let asJournal = try open(database: pristine, journal: input)
        guard asJournal.isAccepted else {
            throw FuzzInvariantViolation("a journal nobody with the key wrote damaged the read models: \(asJournal)")
        }
        return asFile
    }

    private func open(database: [UInt8], journal: [UInt8]?) throws -> FuzzOutcome {
        try? ReadModels.removeFiles(at: databasePath)
        _ = try workspace.write(database, to: "models.db")
        if let journal { _ = try workspace.write(journal, to: "models.db-journal") }
        do {
            let models = try ReadModels(path: databasePath, key: Self.key)
            // Too short to hold a header: a new, empty file, which the vault fills from the log.
            if try models.position == nil { return .refused("an empty file: replayed from the log") }
            guard try Self.answers(models) == answers else {
                throw FuzzInvariantViolation("a changed read-model file opened and answered differently")
            }
            return .accepted
        } catch let violation as FuzzInvariantViolation {
            throw violation
        } catch let error as any StoredDataError {
            // Anything else wrong with the file is damage, which the vault answers with a rebuild.
            guard error.isDamage else { return .refused("not reported as damage: \(error)") }
            return .refused("\(error)")
        }
    }
}
