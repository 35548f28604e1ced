import EventLog
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where passphrases come from: a file's first line, an environment variable, or a prompt
/// without echo. Bytes go straight into secure memory; they never become a Swift `String`.
enum PassphraseInput {
    enum Failure: Error, CustomStringConvertible {
        case noSource(what: String, fileFlag: String, variable: String)
        case unreadableFile(path: String, reason: String)
        case mismatch

        var description: String {
            switch self {
            case .noSource(let what, let flag, let variable):
                "no \(what) given and no terminal to ask on: pass \(flag) FILE or set \(variable)"
            case .unreadableFile(let path, let reason):
                "cannot read passphrase file \(path): \(reason)"
            case .mismatch:
                "the passphrases typed do not match; nothing was changed"
            }
        }
    }

    /// Reads a passphrase from `file`, else `variable`, else a prompt (twice when `confirm`).
    static func read(
        file: String?, variable: String, fileFlag: String, prompt: String, what: String = "passphrase",
        confirm: Bool
    ) throws -> Passphrase {
        if let file { return try fromFile(file) }
        if let value = getenv(variable) {
            let length = strlen(value)
            return Passphrase(copying: UnsafeRawBufferPointer(start: value, count: length))
        }
        guard isatty(STDIN_FILENO) == 1 else {
            throw Failure.noSource(what: what, fileFlag: fileFlag, variable: variable)
        }
        let first = try fromTerminal(prompt: prompt)
        if confirm {
            let second = try fromTerminal(prompt: "Repeat \(prompt.prefix(1).lowercased())\(prompt.dropFirst())")
            guard first.constantTimeEquals(second) else { throw Failure.mismatch }
        }
        return first
    }

    static func fromFile(_ path: String) throws -> Passphrase {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw Failure.unreadableFile(path: path, reason: String(cString: strerror(errno)))
        }
        defer { try? handle.close() }
        var bytes = [UInt8]((try? handle.readToEnd()) ?? Data())
        defer { secureZero(&bytes) }
        var end = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
        if end > 0, bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        return bytes.withUnsafeBytes { Passphrase(copying: UnsafeRawBufferPointer(rebasing: $0.prefix(end))) }
    }

    /// Prompts on stderr and reads one line from the terminal with echo off.
    static func fromTerminal(prompt: String) throws -> Passphrase {
        FileHandle.standardError.write(Data((prompt + ": ").utf8))
        var saved = termios()
        tcgetattr(STDIN_FILENO, &saved)
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        var bytes: [UInt8] = []
        defer { secureZero(&bytes) }
        bytes.reserveCapacity(256)
        var byte: UInt8 = 0
        while Glibc.read(STDIN_FILENO, &byte, 1) == 1, byte != UInt8(ascii: "\n") {
            if byte != UInt8(ascii: "\r") { bytes.append(byte) }
        }
        byte = 0
        return bytes.withUnsafeBytes { Passphrase(copying: $0) }
    }
}

extension VaultOptions {
    /// The vault's passphrase, from the spec's sources in order.
    func passphrase(confirm: Bool = false) throws -> Passphrase {
        try PassphraseInput.read(
            file: passphraseFile, variable: "HEALTHVAULT_PASSPHRASE", fileFlag: "--passphrase-file",
            prompt: "Vault passphrase", confirm: confirm)
    }
}
