import ArgumentParser
import CompanionServer
import Foundation
import Vault

extension Vaultctl {
    struct Companion: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "companion",
            abstract: "Phone apps that post to this vault (`vaultctl serve`).", subcommands: [Pair.self, List.self, Revoke.self],
            defaultSubcommand: List.self)

        func execute() throws {}

        struct Pair: VaultCommand {
            static let configuration = CommandConfiguration(
                commandName: "pair",
                abstract: "Pair a companion app: a new token, shown once, and a QR code holding it with the server's URL and certificate hash.")
            @OptionGroup var vault: VaultOptions
            @Argument(help: "A name for the app (its samples' source).") var name: String
            @Option(help: ArgumentHelp("The URL the phone reaches `vaultctl serve` at (default: this machine's first network address, port 8765).",
                                       valueName: "URL"))
            var url: String?
            @Flag(help: "Print one JSON document on stdout.") var json = false

            struct Output: Encodable { var name: String; var url: String; var token: String; var certSHA256: String }

            func execute() throws {
                let opened = try vault.openForWriting()
                let certificate = try ServerCertificate.loadOrCreate(in: opened)
                let (token, app) = try opened.pairCompanion(name: name)
                let output = Output(name: app.name, url: url ?? NetworkAddress.defaultServerURL(), token: token, certSHA256: certificate.sha256)
                if json {
                    try Console.json(output)
                    return
                }
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                let payload = String(decoding: try encoder.encode(["url": output.url, "token": token, "certSHA256": output.certSHA256]), as: UTF8.self)
                if let lines = TerminalQR.lines(for: payload) {
                    FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
                }
                Console.print("paired '\(app.name)'; scan the code with the app, or enter:")
                Console.print("  url:   \(output.url)")
                Console.print("  token: \(token)   (shown once; `vaultctl companion revoke \(app.name)` stops it)")
                Console.print("  certificate SHA-256: \(output.certSHA256)")
            }
        }

        struct List: VaultCommand {
            static let configuration = CommandConfiguration(commandName: "list", abstract: "List the paired companion apps.")
            @OptionGroup var vault: VaultOptions
            @Flag(help: "Print one JSON document on stdout.") var json = false

            struct Output: Encodable { var name: String; var pairedAt: String; var revokedAt: String? }

            func execute() throws {
                let opened = try Vault.open(at: vault.directory, passphrase: try vault.passphrase())
                let apps = try opened.companionRegistry().apps.values.sorted { $0.name < $1.name }
                let formatter = ISO8601DateFormatter()
                let rows = apps.map { Output(name: $0.name, pairedAt: formatter.string(from: $0.pairedAt), revokedAt: $0.revokedAt.map(formatter.string)) }
                if json {
                    try Console.json(rows)
                    return
                }
                if rows.isEmpty { Console.print("no companion app is paired (`vaultctl companion pair NAME`)") }
                for row in rows { Console.print("\(row.name)  paired \(row.pairedAt)" + (row.revokedAt.map { "  revoked \($0)" } ?? "")) }
            }
        }

        struct Revoke: VaultCommand {
            static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Revoke a companion app's token: its posts are refused from now on.")
            @OptionGroup var vault: VaultOptions
            @Argument(help: "The app's name.") var name: String

            func execute() throws {
                let opened = try vault.openForWriting()
                try opened.revokeCompanion(name: name)
                Console.print("revoked '\(name)': its token no longer works")
            }
        }
    }

    struct Serve: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "serve",
            abstract: "Receive companion apps' posts over HTTPS (docs/companion.md) until SIGINT or SIGTERM.")
        @OptionGroup var vault: VaultOptions
        @Option(help: ArgumentHelp("Address and port to listen on (port 0: any free port).", valueName: "HOST:PORT"))
        var listen = "127.0.0.1:8765"
        @Flag(help: "Plain HTTP, only on a loopback address.") var noTLS = false
        @Option(help: ArgumentHelp("Back up every commit to this directory within 5 seconds (`vaultctl backup DEST`).", valueName: "DEST"))
        var backup: String?

        func validate() throws {
            guard let (host, _) = NetworkAddress.split(listen) else { throw ValidationError("--listen takes HOST:PORT, not '\(listen)'") }
            if noTLS, !NetworkAddress.isLoopback(host) { throw ValidationError("--no-tls is only allowed on a loopback address (127.0.0.1, ::1, localhost)") }
        }

        func execute() throws {
            let (host, port) = NetworkAddress.split(listen)!
            let passphrase = try vault.passphrase()
            var server = CompanionServer(host: host, port: port, tls: !noTLS)
            server.limits = try CompanionServer.Limits.fromEnvironment()
            let directory = vault.directory
            let shipper = try backup.map { try BackupShipper(directory: directory, passphrase: passphrase, destination: $0) }
            shipper?.start()
            defer { shipper?.stop() }
            let done = DispatchSemaphore(value: 0)
            let failure = FailureBox()
            Task {
                do {
                    try await server.run(directory: directory, passphrase: passphrase) { url in
                        Console.print("serving \(directory) at \(url) (SIGINT or SIGTERM to stop)")
                    }
                } catch {
                    failure.set(error)
                }
                done.signal()
            }
            done.wait()
            if let error = failure.error { throw error }
        }

        final class FailureBox: @unchecked Sendable {
            private let lock = NSLock()
            private var stored: Error?
            var error: Error? { lock.withLock { stored } }
            func set(_ error: Error) { lock.withLock { stored = error } }
        }
    }
}

/// Host and port of `--listen`, and the address a phone reaches this machine at.
enum NetworkAddress {
    static func split(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }

    /// `localhost`, or an address (not a name: `127.example.com` is a name) in 127.0.0.0/8 or ::1.
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } == [UInt8](repeating: 0, count: 15) + [1] }
        return false
    }

    /// `https://ADDRESS:8765` with this machine's first non-loopback IPv4 address, else 127.0.0.1.
    static func defaultServerURL() -> String {
        var first: String?
        var list: UnsafeMutablePointer<ifaddrs>?
        if getifaddrs(&list) == 0 {
            var cursor = list
            while let entry = cursor, first == nil {
                if let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) {
                    var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
                    if getnameinfo(address, socklen_t(MemoryLayout<sockaddr_in>.size), &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 {
                        let text = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                        if !text.hasPrefix("127.") { first = text }
                    }
                }
                cursor = entry.pointee.ifa_next
            }
            freeifaddrs(list)
        }
        return "https://\(first ?? "127.0.0.1"):8765"
    }
}
