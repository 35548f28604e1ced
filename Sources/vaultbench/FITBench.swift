import BinaryCoding
import ArgumentParser
import Foundation
import SyntheticHealth

extension VaultBench {
    /// Issue 40's FIT row: a year of generated 1 Hz activities and daily monitoring files in a device's folder, imported by
    /// `vaultctl import FOLDER` as a person runs it, against Garmin's FIT SDK for Python decoding
    /// the same files in the same run (the anchor: the format owner's decoder, doing less, since
    /// it only reads).
    struct FITBench: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fit",
            abstract: "Import a year of generated FIT activities and monitoring files (a device folder) against Garmin's FIT SDK for Python on the same files.")

        @Option(help: "Activities in the year (one every other day or so, 30 to 90 minutes each at 1 Hz).") var activities = 180
        @Option(help: "Days of monitoring files (one a day: steps each minute, heart rate every other).") var days = 365
        @Option(help: "Work directory (the files are generated once and kept there).") var work = ".build/bench"
        @Option(help: "Python with garmin-fit-sdk installed, for the anchor (skipped when absent).") var python = ".build/fitvenv/bin/python"
        @Option(help: "The vaultctl binary (default: beside this one).") var vaultctl: String?
        @Option(help: "First imports to time, each into a new vault; the median is reported.") var passes = 5

        func run() throws {
            let cli = try VaultctlProcess(vaultctl)
            print("vaultbench fit: \(activities) generated activities at 1 Hz and \(days) days of monitoring in a device folder, --kdf interactive")
            print("machine: \(Machine.summary)")
            let device = "\(work)/fit-\(activities)/GARMIN", folder = device + "/Activity"
            if !FileManager.default.fileExists(atPath: folder) {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                var random = SplitMix64(seed: 40)
                for i in 0..<activities {
                    let start = 1_704_096_000 + Int64(i) * 2 * 86_400 + Int64(random.next() % 36_000)
                    let seconds = 1_800 + Int(random.next() % 3_600)
                    let bytes = SyntheticFIT.activity(start: start, seconds: seconds, utcOffset: 3_600, sport: i % 3 == 0 ? 2 : 1, seed: UInt64(i + 1))
                    try Data(bytes).write(to: URL(fileURLWithPath: String(format: "%@/%04d.fit", folder, i)))
                }
            }
            let monitor = device + "/Monitor"
            if days > 0, !FileManager.default.fileExists(atPath: monitor) {
                try FileManager.default.createDirectory(atPath: monitor, withIntermediateDirectories: true)
                for day in 0..<days {
                    // Local midnight of each day from 2024-01-01, an hour east of UTC.
                    let bytes = SyntheticFIT.monitoring(start: 1_704_067_200 + Int64(day) * 86_400 - 3_600, utcOffset: 3_600, seed: UInt64(day + 1))
                    try Data(bytes).write(to: URL(fileURLWithPath: String(format: "%@/%04d.fit", monitor, day)))
                }
            }
            let paths = try [folder, monitor].filter { FileManager.default.fileExists(atPath: $0) }.flatMap { dir in
                try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".fit") }.map { dir + "/" + $0 }
            }
            let bytes = try paths.reduce(0) { $0 + ((try FileManager.default.attributesOfItem(atPath: $1)[.size] as? NSNumber)?.intValue ?? 0) }
            print("files: \(paths.count) FIT files, \(bytes / 1_000_000) MB")

            let passphrase = "\(work)/fit-pass", vault = "\(work)/vault-fit"
            defer { try? FileManager.default.removeItem(atPath: vault); try? FileManager.default.removeItem(atPath: passphrase) }
            try Data("fit bench passphrase\n".utf8).write(to: URL(fileURLWithPath: passphrase))
            let common = ["--vault", vault, "--passphrase-file", passphrase]
            var times: [Double] = []
            var peak = 0
            for _ in 0..<max(passes, 1) {
                try? FileManager.default.removeItem(atPath: vault)
                try cli.run(["init", "--kdf", "interactive"] + common)
                let (seconds, peakKiB) = try timedFromHere(cli.binary, ["import", device] + common)
                times.append(seconds)
                peak = max(peak, peakKiB)
            }
            let seconds = median(times)
            let (again, _) = try timedFromHere(cli.binary, ["import", device] + common)
            print("")
            print("import      \(seconds.formatted(2)) s, whole command, median of \(times.count) (\(times.map { $0.formatted(2) }.joined(separator: ", "))); peak RSS \((Double(peak) / 1024).formatted(0)) MiB, the highest (target <= 100 MiB)")
            print("re-import   \(again.formatted(2)) s, nothing added")
            guard FileManager.default.isExecutableFile(atPath: python) else {
                print("anchor      skipped: no \(python) (python3 -m venv .build/fitvenv && .build/fitvenv/bin/pip install garmin-fit-sdk==21.218.0)")
                return
            }
            let script = """
                import os, sys
                from garmin_fit_sdk import Decoder, Stream
                n = 0
                for folder in sys.argv[1:]:
                    for name in sorted(os.listdir(folder)):
                        messages, errors = Decoder(Stream.from_file(os.path.join(folder, name))).read()
                        n += len(messages.get("record_mesgs", [])) + len(messages.get("monitoring_mesgs", []))
                print(n)
                """
            let (sdk, _) = try timedFromHere(python, ["-c", script] + [folder, monitor].filter { FileManager.default.fileExists(atPath: $0) })
            print("anchor      Garmin's FIT SDK for Python decoding the same files: \(sdk.formatted(2)) s")
            print("ratio       vaultctl import is \((sdk / seconds).formatted(1))x as fast as the SDK's decoding alone (target >= 20x)")
        }

    }
}
