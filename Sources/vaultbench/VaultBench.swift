import ArgumentParser
import Vault

/// `vaultbench`: the benchmarks whose output docs/benchmarks.md records. Each compares the
/// project against an anchor measured in the same run, and prints the machine it ran on.
@main
struct VaultBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vaultbench",
        abstract: "Measure healthvault against its targets and anchors.",
        subcommands: [LogBench.self, ImportBench.self, ProjectionBench.self, BundleBench.self, RekeyBench.self, EraseBench.self, CommandsBench.self, ExportScopeBench.self, PagesBench.self, ServeBench.self, BackupBench.self, FITBench.self, ReportBench.self, StudyBench.self, Generate.self]
    )

    /// The same process setting as vaultctl, so that the figures are vaultctl's.
    static func main() {
        ProcessTuning.limitMallocArenas()
        main(nil)
    }
}
