import ArgumentParser
import HealthModel
import Vault

/// `YYYY-MM-DD` on the command line: a local calendar day, inclusive.
extension LocalDay: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(parsing: argument)
    }
}

/// `--from` / `--to` as the read commands share them.
struct DayRange: ParsableArguments {
    @Option(help: ArgumentHelp("First day, inclusive.", valueName: "YYYY-MM-DD"))
    var from: LocalDay?

    @Option(help: ArgumentHelp("Last day, inclusive.", valueName: "YYYY-MM-DD"))
    var to: LocalDay?

    func validate() throws {
        if let from, let to, to < from { throw ValidationError("--to \(to) is before --from \(from)") }
    }
}
