import Foundation

/// Runs the built `vaultctl` as a user would: arguments, environment, no terminal.
public struct CLIRunner {
    public struct Result {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// The binary next to the test bundle (SwiftPM builds it because the tests depend on it).
    public static let binary: URL = {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("vaultctl")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/vaultctl")
    }()

    public var environment: [String: String] = [:]

    public init(environment: [String: String] = [:]) {
        self.environment = environment
    }

    /// Starts `vaultctl arguments...` without waiting for it, with stdin from /dev/null.
    public func start(_ arguments: [String], stdout: Any = FileHandle.nullDevice, stderr: Any = FileHandle.nullDevice,
                      onExit: (@Sendable (Process) -> Void)? = nil) throws -> Process {
        let process = Process()
        process.terminationHandler = onExit
        process.executableURL = Self.binary
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HEALTHVAULT_") }
        env.merge(environment) { $1 }
        process.environment = env
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Starts `vaultctl arguments...`, SIGKILLs it `delay` microseconds later unless it ended
    /// before, and says whether it finished with exit status 0 (its work acknowledged).
    public func runKilled(_ arguments: [String], after delay: UInt32) throws -> Bool {
        let ended = DispatchSemaphore(value: 0)
        let process = try start(arguments) { _ in ended.signal() }
        return Self.killUnlessEnded(process, signalled: ended, after: delay) != nil
    }

    /// `runKilled`, keeping what the command printed on stdout before it ended or was killed, and
    /// how long it ran when it finished (nil when it was killed or failed).
    public func runKilledCapturing(_ arguments: [String], after delay: UInt32) throws -> (finished: Bool, stdout: String, seconds: Double?) {
        let out = Pipe()
        let ended = DispatchSemaphore(value: 0)
        let process = try start(arguments, stdout: out) { _ in ended.signal() }
        let drain = PipeDrain(out.fileHandleForReading)
        let seconds = Self.killUnlessEnded(process, signalled: ended, after: delay)
        let stdout = drain.wait()
        return (seconds != nil, String(decoding: stdout, as: UTF8.self), seconds)
    }

    /// Waits up to `delay` microseconds for `process` to end (`ended` is signalled then), SIGKILLs
    /// it if it has not, and returns the seconds it ran if it exited with status 0 on its own.
    private static func killUnlessEnded(_ process: Process, signalled ended: DispatchSemaphore, after delay: UInt32) -> Double? {
        let started = DispatchTime.now()
        let endedInTime = ended.wait(timeout: started + .microseconds(Int(delay))) == .success
        // Still running: not yet reaped, so its pid is still its own.
        if !endedInTime, process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else { return nil }
        return Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
    }

    /// Runs `vaultctl arguments...` with stdin from /dev/null. Both pipes are drained at once: a
    /// child that fills one while the other is read to its end would wait forever.
    public func run(_ arguments: [String]) throws -> Result {
        let out = Pipe(), err = Pipe()
        let process = try start(arguments, stdout: out, stderr: err)
        let stderrReader = PipeDrain(err.fileHandleForReading)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = stderrReader.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }
}

/// Reads a pipe to its end on a thread of its own.
public final class PipeDrain: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    public init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    /// Everything the pipe carried, once its writer closed it.
    public func wait() -> Data {
        done.wait()
        return data
    }
}

extension TemporaryDirectory {
    /// Writes a passphrase file (mode 0600) and returns its path.
    public func passphraseFile(_ name: String, _ text: String) -> String {
        let path = file(name)
        _ = FileManager.default.createFile(atPath: path, contents: Data((text + "\n").utf8), attributes: [.posixPermissions: 0o600])
        return path
    }
}
