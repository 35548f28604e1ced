import ArgumentParser
import Vault

/// `vaultctl`: the command-line face of a healthvault. Parses arguments and prints; the work is
/// done by the `Vault` module.
@main
struct Vaultctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vaultctl",
        abstract: "Keep your health data in a local, encrypted, event-sourced vault.",
        version: "vaultctl 0.3.0 (log format 3, bundle format 2)",
        subcommands: [Init.self, Import.self, Types.self, Rings.self, Summary.self, Sleep.self, Workouts.self, Streaks.self, Goals.self, Sources.self, SQL.self, Rebuild.self, Keygen.self, Identity.self, Recipient.self, Grant.self, Revoke.self, Consents.self, Export.self, BundleCommand.self, History.self, Verify.self, Passwd.self, Erase.self, Companion.self, Serve.self, Backup.self, Restore.self, Tracker.self, Track.self, ExerciseCommand.self, Practice.self, Stats.self, ReportCommand.self, Study.self, Demo.self]
    )

    static func main() {
        ProcessTuning.limitMallocArenas()
        ProcessTuning.hardenAgainstMemoryDumps()
        main(nil)
    }
}
