import Foundation
import Vault
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
        case empty(variable: String)

        var description: String {
            switch self {
            case .noSource(let what, let flag, let variable):
                "no \(what) given and no terminal to ask on: pass \(flag) FILE or set \(variable)"
            case .unreadableFile(let path, let reason):
                "cannot read passphrase file \(path): \(reason)"
            case .mismatch:
                "the passphrases typed do not match; nothing was changed"
            case .empty(let variable):
                "\(variable) is set but empty: a vault's passphrase is never empty"
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
            guard length > 0 else {
                unsetenv(variable)
                throw Failure.empty(variable: variable)
            }
            let passphrase = Passphrase(copying: UnsafeRawBufferPointer(start: value, count: length))
            // The environment block is the last plaintext copy in this process: wiped in place,
            // then the variable removed, so nothing later (a child, a Foundation copy) sees it.
            secureZero(value, count: length)
            unsetenv(variable)
            return passphrase
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

    /// The longest passphrase accepted; reads go into a fixed buffer that is zeroed afterwards.
    static let maxLength = 1024

    static func fromFile(_ path: String) throws -> Passphrase {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure.unreadableFile(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        return try readLine(from: fd, source: path)
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
        return try readLine(from: STDIN_FILENO, source: "the terminal")
    }

    /// Reads up to the first newline (a trailing CR dropped) into a fixed buffer, never resized,
    /// and zeroes the buffer before returning.
    private static func readLine(from fd: Int32, source: String) throws -> Passphrase {
        var buffer = [UInt8](repeating: 0, count: maxLength + 1)
        defer { secureZero(&buffer) }
        var length = 0
        var byte: UInt8 = 0
        defer { byte = 0 }
        while true {
            let n = Glibc.read(fd, &byte, 1)
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure.unreadableFile(path: source, reason: String(cString: strerror(errno)))
            }
            if n == 0 || byte == UInt8(ascii: "\n") { break }
            guard length < maxLength else {
                throw Failure.unreadableFile(path: source, reason: "passphrase longer than \(maxLength) bytes")
            }
            buffer[length] = byte
            length += 1
        }
        if length > 0, buffer[length - 1] == UInt8(ascii: "\r") { length -= 1 }
        return buffer.withUnsafeBytes { Passphrase(copying: UnsafeRawBufferPointer(rebasing: $0.prefix(length))) }
    }
}

extension VaultOptions {
    /// The vault's passphrase, from the spec's sources in order. Asked for an existing vault
    /// (`confirm` false), it is not asked for at all where there is none: that is said first.
    func passphrase(confirm: Bool = false) throws -> Passphrase {
        if !confirm, !FileManager.default.fileExists(atPath: Vault.keyslotPath(in: directory)),
           !FileManager.default.fileExists(atPath: directory + "/rekey.ready") {
            throw VaultError.noVault(path: directory)
        }
        return try PassphraseInput.read(
            file: passphraseFile, variable: "HEALTHVAULT_PASSPHRASE", fileFlag: "--passphrase-file",
            prompt: "Vault passphrase", confirm: confirm)
    }
}
