import ArgumentParser
import EventLog
import Foundation
import HealthModel
import Projections
import SyntheticHealth
import Vault

extension VaultBench {
    /// Projections of a generated one-year export: correctness against the export's own
    /// ActivitySummary and day figures, rebuild rate, and `rings` latency after open.
    struct ProjectionBench: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "projections",
            abstract: "Rebuild the read models of a generated year, check them against the export, time rings.")

        @Option(help: "Days the generated export covers.") var days = 365
        @Option(help: "Timed passes; the median is reported.") var passes = 5
        @Option(help: "Work directory (the export is generated once and kept there).") var work = ".build/bench"

        func run() throws {
            print("vaultbench projections: generated export of \(days) days")
            print("machine: \(Machine.summary)")
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            let zip = "\(work)/export-\(days)d-seed1-projections.zip"
            let summary = try SyntheticExport.writeZip(to: zip, options: .init(days: days, seed: 1))
            let dir = "\(work)/vault-projections"
            try? FileManager.default.removeItem(atPath: dir)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            var pp = Array("bench passphrase".utf8)
            let passphrase = Passphrase(consuming: &pp)
            do {
                let vault = try Vault.create(at: dir, passphrase: passphrase, kdf: KDFPreset.interactive.parameters, kdfName: "interactive")
                let report = try vault.importFiles([zip])
                print("imported    \(grouped(report.added)) events from \(summary.records) records")
            }
            let vault = try Vault.open(at: dir, passphrase: passphrase, mode: .readWrite)

            // Anchor: decoding every event of the log with nothing projected; the same pass sums
            // step samples per start day, the double count a per-record tool reports.
            var anchorTimes: [Double] = []
            var naiveSteps: [Int64: Double] = [:]
            for _ in 0..<passes {
                var sums: [Int64: Double] = [:]
                let (_, seconds) = try measure {
                    for (_, event) in try vault.allEvents() {
                        if case .sample(let s) = event, s.type == "HKQuantityTypeIdentifierStepCount", case .quantity(let v, _) = s.value {
                            sums[LocalDay(instant: s.start.seconds, utcOffset: s.start.utcOffset).dayNumber, default: 0] += v.double
                        }
                    }
                }
                anchorTimes.append(seconds)
                naiveSteps = sums
            }
            var rebuilds: [ProjectionRebuild] = []
            for _ in 0..<passes { rebuilds.append(try vault.rebuildProjections()) }
            let rebuild = rebuilds.sorted { $0.seconds < $1.seconds }[passes / 2]
            let anchor = anchorTimes.sorted()[passes / 2]

            // Correctness, every day.
            let rings = try vault.rings()
            var moveOff = 0, exerciseOff = 0, standOff = 0, goalOff = 0, noSummary = 0
            var worstMove = 0.0
            for day in rings {
                guard let apple = day.apple, let move = apple.move, let exercise = apple.exercise, let stand = apple.stand else { noSummary += 1; continue }
                worstMove = max(worstMove, abs(day.move - move))
                if abs(day.move - move) > 0.5 { moveOff += 1 }
                if day.exercise.rounded() != exercise { exerciseOff += 1 }
                if Double(day.stand) != stand { standOff += 1 }
                if day.moveGoal != apple.moveGoal || day.exerciseGoal != apple.exerciseGoal || day.standGoal != apple.standGoal { goalOff += 1 }
            }
            let steps = try vault.summary(metric: "steps", by: .day)
            var stepsOff = 0
            var naiveOver = 0.0
            for row in steps {
                guard let day = LocalDay(parsing: row.period), let truth = summary.days[day.dayNumber] else { stepsOff += 1; continue }
                if Int(row.value.rounded()) != truth.steps { stepsOff += 1 }
                naiveOver += (naiveSteps[day.dayNumber] ?? 0) / Double(truth.steps)
            }

            // `rings` for the whole year on a freshly opened vault: unseal the image, load it, query.
            var ringTimes: [Double] = []
            for _ in 0..<passes {
                let opened = try Vault.open(at: dir, passphrase: passphrase)
                let (year, seconds) = try measure { try opened.rings() }
                precondition(year.count == rings.count && opened.projectionNotice == nil)
                ringTimes.append(seconds)
            }
            let ringTime = ringTimes.sorted()[passes / 2]
            let imageBytes = (try FileManager.default.attributesOfItem(atPath: dir + "/" + Vault.projectionsFileName)[.size] as? NSNumber)?.int64Value ?? 0

            let rate = Double(rebuild.events) / rebuild.seconds
            print("")
            print("rings       \(rings.count) days: move within 0.5 kcal of ActivitySummary on \(rings.count - moveOff - noSummary) (worst \(worstMove.formatted(3)) kcal), exercise exact on \(rings.count - exerciseOff - noSummary), stand exact on \(rings.count - standOff - noSummary), goals equal on \(rings.count - goalOff - noSummary), no summary on \(noSummary)   target every day: \(moveOff + exerciseOff + standOff + goalOff + noSummary == 0 && rings.count == days ? "met" : "NOT MET")")
            print("steps       \(steps.count) days equal the Health app's total on \(steps.count - stepsOff); summing every record instead gives \((naiveOver / Double(max(steps.count, 1))).formatted(2)) x the true total on average")
            print("rebuild     \(rebuild.seconds.formatted(3)) s (median of \(passes): \(rebuilds.map { $0.seconds.formatted(3) }.joined(separator: ", "))) for \(grouped(Int(rebuild.events))) log events (\(grouped(rebuild.inputs)) fed the read models): \(grouped(Int(rate))) samples/s   target >= 1,000,000 samples/s: \(rate >= 1_000_000 ? "met" : "NOT MET")")
            print("anchor      decoding the same log with nothing projected: \(anchor.formatted(3)) s (median of \(passes)); rebuild = \((rebuild.seconds / anchor).formatted(2)) x the anchor's time")
            print("rings       whole year after open: \((ringTime * 1000).formatted(1)) ms (median of \(passes): \(ringTimes.map { ($0 * 1000).formatted(1) }.joined(separator: ", ")) ms; unseal \(grouped(Int(imageBytes))) B image + load + query; Argon2id excluded)   target <= 100 ms: \(ringTime <= 0.1 ? "met" : "NOT MET")")
        }
    }
}
