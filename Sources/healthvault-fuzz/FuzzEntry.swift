import Foundation
import FuzzTargets

// Built two ways:
// - by `scripts/fuzz.sh` with `-sanitize=fuzzer,address -DLIBFUZZER`: libFuzzer's driver, one
//   target chosen by HEALTHVAULT_FUZZ_TARGET, a broken promise becomes a crash (input saved);
// - by a plain `swift build`: a small tool that writes a target's seeds and replays inputs,
//   which is how a saved crash is reproduced under the debugger.

/// The workspace a run uses: HEALTHVAULT_FUZZ_WORKSPACE, or a fresh temporary directory.
func workspace(for target: FuzzTarget) -> String {
    ProcessInfo.processInfo.environment["HEALTHVAULT_FUZZ_WORKSPACE"]
        ?? NSTemporaryDirectory() + "/healthvault-fuzz-\(target.rawValue)-\(getpid())"
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
        do {
            harness = try target.makeHarness(workspace: workspace(for: target))
        } catch {
            printError("cannot set up the \(name) harness: \(error)")
            exit(2)
        }
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { testOneInput($0, $1) })
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
        guard arguments.count >= 3, let target = FuzzTarget(rawValue: arguments[0]) else {
            printError(usage)
            exit(2)
        }
        let directory = workspace(for: target)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let harness = try target.makeHarness(workspace: directory)
        switch arguments[1] {
        case "seeds":
            try FileManager.default.createDirectory(atPath: arguments[2], withIntermediateDirectories: true)
            for seed in try harness.seeds() {
                try Data(seed.bytes).write(to: URL(fileURLWithPath: arguments[2] + "/" + seed.name))
                print("\(arguments[2])/\(seed.name): \(seed.bytes.count) bytes")
            }
        case "replay":
            var failed = false
            for path in try files(arguments.dropFirst(2)) {
                do {
                    let outcome = try harness.run([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
                    switch outcome {
                    case .accepted: print("\(path): accepted")
                    case .refused(let reason): print("\(path): refused: \(reason)")
                    }
                } catch {
                    failed = true
                    print("\(path): BROKEN PROMISE: \(error)")
                }
            }
            if failed { exit(1) }
        default:
            printError(usage)
            exit(2)
        }
    }

    static func files(_ paths: ArraySlice<String>) throws -> [String] {
        try paths.flatMap { path -> [String] in
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [path] }
            return try FileManager.default.contentsOfDirectory(atPath: path).sorted().map { path + "/" + $0 }
        }
    }
}

#endif
