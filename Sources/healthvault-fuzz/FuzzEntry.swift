import Foundation
import FuzzTargets

// Built two ways:
// - by `scripts/fuzz.sh` with `-sanitize=fuzzer,address -DLIBFUZZER`: libFuzzer's driver, one
//   target chosen by HEALTHVAULT_FUZZ_TARGET, a broken promise becomes a crash (input saved);
// - by a plain `swift build`: a small tool that writes a target's seeds and replays inputs,
//   which is how a saved crash is reproduced under the debugger.

/// The workspace a run uses: HEALTHVAULT_FUZZ_WORKSPACE (left in place), or a fresh temporary
/// directory (`owned`: removed when the run ends).
func workspace(for target: FuzzTarget) -> (path: String, owned: Bool) {
    if let given = ProcessInfo.processInfo.environment["HEALTHVAULT_FUZZ_WORKSPACE"] { return (given, false) }
    return (NSTemporaryDirectory() + "/healthvault-fuzz-\(target.rawValue)-\(getpid())", true)
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

#if LIBFUZZER
import CLibFuzzer

nonisolated(unsafe) var harness: (any FuzzHarness)?

func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        _ = try harness!.run(input)
    } catch {
        fatalError("\(error)")
    }
    return 0
}

@main
struct FuzzDriver {
    static func main() {
        let name = ProcessInfo.processInfo.environment["HEALTHVAULT_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            printError("set HEALTHVAULT_FUZZ_TARGET to one of: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))")
            exit(2)
        }
        let directory = workspace(for: target)
        do {
            harness = try target.makeHarness(workspace: directory.path)
        } catch {
            printError("cannot set up the \(name) harness: \(error)")
            exit(2)
        }
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        let status = LLVMFuzzerRunDriver(&argc, &argv) { testOneInput($0, $1) }
        if directory.owned { try? FileManager.default.removeItem(atPath: directory.path) }
        exit(status)
    }
}

#else

@main
struct FuzzTool {
    static let usage = """
        usage: healthvault-fuzz TARGET seeds DIR       write the target's generated seeds into DIR
               healthvault-fuzz TARGET replay PATH...  run files (or every file in folders) through the target
        targets: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))
        The fuzzer itself: scripts/fuzz.sh (make fuzz).
        """

    static func main() throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count >= 3, let target = FuzzTarget(rawValue: arguments[0]), ["seeds", "replay"].contains(arguments[1]) else {
            printError(usage)
            exit(2)
        }
        let directory = workspace(for: target)
        let allKept = try run(target, arguments[1], Array(arguments.dropFirst(2)), workspace: directory.path)
        if directory.owned { try? FileManager.default.removeItem(atPath: directory.path) }
        exit(allKept ? 0 : 1)
    }

    /// Runs a command; false when an input broke a promise.
    static func run(_ target: FuzzTarget, _ command: String, _ paths: [String], workspace: String) throws -> Bool {
        let harness = try target.makeHarness(workspace: workspace)
        if command == "seeds" {
            try FileManager.default.createDirectory(atPath: paths[0], withIntermediateDirectories: true)
            for seed in try harness.seeds() {
                try Data(seed.bytes).write(to: URL(fileURLWithPath: paths[0] + "/" + seed.name))
                print("\(paths[0])/\(seed.name): \(seed.bytes.count) bytes")
            }
            return true
        }
        var allKept = true
        for path in try files(paths) {
            do {
                switch try harness.run([UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))) {
                case .accepted: print("\(path): accepted")
                case .refused(let reason): print("\(path): refused: \(reason)")
                }
            } catch {
                allKept = false
                print("\(path): BROKEN PROMISE: \(error)")
            }
        }
        return allKept
    }

    static func files(_ paths: [String]) throws -> [String] {
        try paths.flatMap { path -> [String] in
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [path] }
            return try FileManager.default.contentsOfDirectory(atPath: path).sorted().map { path + "/" + $0 }
        }
    }
}

#endif
