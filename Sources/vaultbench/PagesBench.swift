import ArgumentParser
import CPageCipher
import CSQLite
import Foundation
import SecureMemory

extension VaultBench {
    /// The page codec against its alternatives, on one workload: plain SQLite files (the anchor),
    /// the read models' libsodium VFS (in this process, as vaultctl uses it), and Debian's
    /// SQLCipher through its command-line shell, with the plain `sqlite3` shell as that one's
    /// anchor. docs/projections.md records why the VFS was chosen.
    struct PagesBench: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pages",
            abstract: "Time plain SQLite, the page-cipher VFS and SQLCipher on the same workload.")

        @Option(help: "Rows inserted.") var rows = 1_000_000
        @Option(help: "Timed passes; the median is reported.") var passes = 3
        @Option(help: "Work directory.") var work = ".build/bench"

        /// One engine's figures.
        struct Figures {
            var create = 0.0, read = 0.0, update = 0.0
            var bytes = 0
        }

        var createSQL: String {
            """
            CREATE TABLE t(k INTEGER PRIMARY KEY, day INTEGER NOT NULL, v REAL NOT NULL, data BLOB NOT NULL);
            BEGIN;
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < \(rows))
            INSERT INTO t SELECT x, x / 300, x * 0.5, randomblob(24) FROM c;
            COMMIT;
            """
        }
        var readSQL: String { "SELECT sum(v), count(*) FROM t WHERE k BETWEEN \(rows / 2) AND \(rows / 2 + 2_100);" }
        var updateSQL: String { "UPDATE t SET v = v + 1 WHERE k = \(rows / 3);" }

        func run() throws {
            print("vaultbench pages: \(grouped(rows)) rows of (key, day, value, 24-byte blob); each figure the median of \(passes)")
            print("machine: \(Machine.summary)")
            print("sqlite:  \(String(cString: sqlite3_libversion())) (system); sqlcipher: \(Self.shellVersion("sqlcipher") ?? "not installed (apt-get install sqlcipher)")")
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            let key = SecretKey.random()
            let vfs = "bench-pages"
            let registered = key.withUnsafeBytes { hv_page_vfs_register(vfs, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), 4096) }
            guard registered == SQLITE_OK else { throw ValidationError("could not register the page cipher (\(registered))") }
            defer { hv_page_vfs_unregister(vfs) }

            let plain = try passesOf { try inProcess(path: "\(work)/pages-plain.db", vfs: nil) }
            let cipher = try passesOf { try inProcess(path: "\(work)/pages-cipher.db", vfs: vfs) }
            print("")
            print("in this process (as vaultctl runs it):")
            report("plain SQLite file", plain, anchor: plain)
            report("page-cipher VFS (libsodium)", cipher, anchor: plain)
            guard Self.shellVersion("sqlite3") != nil, Self.shellVersion("sqlcipher") != nil else {
                print("shells: skipped (needs the sqlite3 and sqlcipher command-line shells)")
                return
            }
            let hexKey = key.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
            let shellPlain = try passesOf { try shell("sqlite3", path: "\(work)/pages-shell-plain.db", prefix: "") }
            let shellCipher = try passesOf { try shell("sqlcipher", path: "\(work)/pages-shell-sqlcipher.db", prefix: "PRAGMA key = \"x'\(hexKey)'\";\n") }
            print("")
            print("through the command-line shells (a process each, start-up included):")
            report("sqlite3 shell", shellPlain, anchor: shellPlain)
            report("sqlcipher shell (raw key, no KDF)", shellCipher, anchor: shellPlain)
        }

        private func passesOf(_ body: () throws -> Figures) throws -> Figures {
            var all: [Figures] = []
            for _ in 0..<passes { all.append(try body()) }
            return Figures(create: median(all.map(\.create)), read: median(all.map(\.read)), update: median(all.map(\.update)), bytes: all.last!.bytes)
        }

        private func report(_ name: String, _ f: Figures, anchor: Figures) {
            func ratio(_ a: Double, _ b: Double) -> String { b > 0 ? "\((a / b).formatted(2))x" : "-" }
            print("  \(name.padding(toLength: 36, withPad: " ", startingAt: 0)) create \(f.create.formatted(2)) s (\(ratio(f.create, anchor.create))), "
                  + "cold range read \((f.read * 1000).formatted(1)) ms (\(ratio(f.read, anchor.read))), "
                  + "one-row commit \((f.update * 1000).formatted(1)) ms (\(ratio(f.update, anchor.update))), file \(grouped(f.bytes)) B")
        }

        /// Create, then a cold read and a one-row commit, each on a fresh connection.
        private func inProcess(path: String, vfs: String?) throws -> Figures {
            for suffix in ["", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            func session(_ sql: String) throws {
                var db: OpaquePointer?
                guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs) == SQLITE_OK, let db else {
                    throw ValidationError("cannot open \(path)")
                }
                defer { sqlite3_close_v2(db) }
                var message: UnsafeMutablePointer<CChar>?
                guard sqlite3_exec(db, sql, nil, nil, &message) == SQLITE_OK else {
                    defer { sqlite3_free(message) }
                    throw ValidationError("SQLite: \(message.map { String(cString: $0) } ?? "?")")
                }
            }
            return try figures(path: path, session)
        }

        private func shell(_ program: String, path: String, prefix: String) throws -> Figures {
            for suffix in ["", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            func session(_ sql: String) throws {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/" + program)
                process.arguments = ["-batch", "-bail", path]
                let input = Pipe()
                process.standardInput = input
                process.standardOutput = FileHandle.nullDevice
                try process.run()
                input.fileHandleForWriting.write(Data((prefix + sql + "\n").utf8))
                try input.fileHandleForWriting.close()
                process.waitUntilExit()
                guard process.terminationStatus == 0 else { throw ValidationError("\(program) failed") }
            }
            return try figures(path: path, session)
        }

        /// Create, then a cold read and a one-row commit, each through `session` (a fresh connection
        /// or process each), and the file's size.
        private func figures(path: String, _ session: (String) throws -> Void) throws -> Figures {
            var f = Figures()
            f.create = try measure { try session(createSQL) }.1
            f.read = try measure { try session(readSQL) }.1
            f.update = try measure { try session(updateSQL) }.1
            f.bytes = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
            return f
        }

        static func shellVersion(_ program: String) -> String? {
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/" + program) else { return nil }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/" + program)
            process.arguments = ["-version"]
            let output = Pipe()
            process.standardOutput = output
            guard (try? process.run()) != nil else { return nil }
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self).split(separator: " ").first.map(String.init)
        }
    }
}
