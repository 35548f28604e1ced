import ArgumentParser
import Foundation

/// A subcommand whose failures print as one line on stderr and exit non-zero.
protocol VaultCommand: ParsableCommand {
    func execute() throws
}

extension VaultCommand {
    func run() throws {
        do {
            try execute()
        } catch let error as ExitCode {
            throw error
        } catch let error as CleanExit {
            throw error
        } catch {
            Console.error("\(error)")
            throw ExitCode.failure
        }
    }
}

/// Output conventions: data on stdout, everything else on stderr. Every line passes through
/// `TerminalText.sanitize`: what it quotes may come from untrusted files.
enum Console {
    static func error(_ message: String) {
        FileHandle.standardError.write(Data("vaultctl: error: \(TerminalText.sanitize(message))\n".utf8))
    }

    static func note(_ message: String) {
        FileHandle.standardError.write(Data("\(TerminalText.sanitize(message))\n".utf8))
    }

    /// Prints one JSON document on stdout.
    static func json<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // A sum that overflowed a Double (absurd values a vault of an older build may hold) is
        // said as a string, not a crash: JSON has no number for it.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        let data = TerminalText.sanitizeJSON(try encoder.encode(value))
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }

    static func print(_ line: String) {
        FileHandle.standardOutput.write(Data((TerminalText.sanitize(line) + "\n").utf8))
    }
}
