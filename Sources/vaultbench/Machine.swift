import ArgumentParser
import Foundation

/// Where and when a benchmark ran, printed at the top of its report.
enum Machine {
    static var summary: String {
        let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        let memory = ProcessInfo.processInfo.physicalMemory >> 30
        let date = ISO8601DateFormatter().string(from: Date())
        return "\(date), \(cpu), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(memory) GiB"
    }

    /// Resets the peak RSS to the current RSS (Linux: writing 5 to /proc/self/clear_refs).
    static func resetPeakRSS() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    /// Peak resident set size of this process in MiB (VmHWM).
    static var peakRSSMiB: Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kb = Double(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kb / 1024
    }
}

/// Wall-clock time of a closure.
func measure<T>(_ body: () throws -> T) rethrows -> (T, Double) {
    let start = DispatchTime.now().uptimeNanoseconds
    let result = try body()
    return (result, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
}

extension Double {
    func formatted(_ digits: Int) -> String { String(format: "%.\(digits)f", self) }
}

func grouped(_ n: Int) -> String {
    let digits = String(n)
    var out = ""
    for (i, c) in digits.reversed().enumerated() {
        if i > 0 && i % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return String(out.reversed())
}

/// Runs a program to its end under `/usr/bin/time` and returns its wall time and peak RSS, or
/// nil with what it printed when it failed.
func timedProcess(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (seconds: Double, peakKiB: Double)? {
    let process = Process()
    if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
    process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
    process.arguments = ["-f", "%e %M", executable] + arguments
    let err = Pipe()
    process.standardError = err
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    let output = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    let fields = output.split(whereSeparator: \.isNewline).last?.split(separator: " ") ?? []
    guard process.terminationStatus == 0, fields.count == 2, let seconds = Double(fields[0]), let kib = Double(fields[1]) else {
        print("\(executable) failed: \(output.suffix(300))")
        return nil
    }
    return (seconds, kib)
}

/// A program run to its end, timed from here (`timedProcess`'s seconds have 10 ms steps), with
/// its peak RSS in KiB from /usr/bin/time; throws when it fails.
func timedFromHere(_ executable: String, _ arguments: [String]) throws -> (seconds: Double, peakKiB: Int) {
    let (result, seconds) = try measure { try timedProcess(executable, arguments) }
    guard let result else { throw ValidationError("\(executable) \(arguments.first ?? "") failed") }
    return (seconds, Int(result.peakKiB))
}

/// The middle of timings (the upper middle of an even count): single passes vary by ±20 % on
/// this shared machine.
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
