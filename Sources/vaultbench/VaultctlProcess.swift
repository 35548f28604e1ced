import ArgumentParser
import Foundation

/// `vaultctl` run as a user runs it: a process per command, its output discarded.
struct VaultctlProcess {
    let binary: String

    /// The binary beside this one, or `path`; refuses when it is not there.
    init(_ path: String?) throws {
        binary = path ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("vaultctl").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw ValidationError("no vaultctl at \(binary): build it (swift build -c release --product vaultctl) or pass --vaultctl")
        }
    }

    /// Runs `vaultctl arguments...`; throws unless it exits 0.
    func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ValidationError("vaultctl \(arguments[0]) failed (exit \(process.terminationStatus))") }
    }

    /// Runs `vaultctl arguments...` and returns its stdout; throws unless it exits 0.
    func output(_ arguments: [String]) throws -> Data {
        let process = Process(), out = Pipe()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ValidationError("vaultctl \(arguments[0]) failed (exit \(process.terminationStatus))") }
        return data
    }

    /// Seconds `run` took.
    func time(_ arguments: [String]) throws -> Double {
        try measure { try run(arguments) }.1
    }
}
