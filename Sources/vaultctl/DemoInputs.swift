import Foundation

/// The demo's generated inputs, made by `healthvault-demo` beside this binary (`make demo` builds
/// both): the `vaultctl` a person installs links no generator (docs/architecture.md).
struct DemoInputs {
    /// What `healthvault-demo export` wrote.
    struct Export: Decodable {
        var records: Int
        var routeFiles: Int
        var xmlBytes: Int64
    }

    /// What `healthvault-demo study` wrote.
    struct Study: Decodable {
        var bundles: [String]
        var roster: String
        var keyFile: String
    }

    struct Missing: Error, CustomStringConvertible {
        var path: String
        var description: String {
            "vaultctl demo generates its data with healthvault-demo, which is not beside vaultctl (\(path)): `make demo` builds both"
        }
    }

    struct Failed: Error, CustomStringConvertible {
        var command: String
        var status: Int32
        var description: String { "healthvault-demo \(command) failed (exit \(status)); its error is above" }
    }

    let generator: String

    /// The generator beside the running `vaultctl`.
    init() throws {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        generator = executable.deletingLastPathComponent().appendingPathComponent("healthvault-demo").path
        guard FileManager.default.isExecutableFile(atPath: generator) else { throw Missing(path: generator) }
    }

    func export(days: Int, tripStart: Int, to path: String) throws -> Export {
        try run(["export", "--days", "\(days)", "--trip-start", "\(tripStart)", "--out", path])
    }

    func fitActivity(start: Int64, seconds: Int, utcOffset: Int32, to path: String) throws {
        let _: [String: Int] = try run(["fit", "--start=\(start)", "--seconds=\(seconds)", "--utc-offset=\(utcOffset)", "--out", path])
    }

    func study(in directory: String, participants: Int, days: Int) throws -> Study {
        try run(["study", "--directory", directory, "--participants", "\(participants)", "--days", "\(days)"])
    }

    private func run<T: Decodable>(_ arguments: [String]) throws -> T {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: generator)
        process.arguments = arguments
        // Its errors reach the person's terminal as they are; what it wrote comes back on stdout.
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.standardError
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Failed(command: arguments[0], status: process.terminationStatus) }
        return try JSONDecoder().decode(T.self, from: stdout)
    }
}
