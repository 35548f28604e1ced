import Foundation
import Vault

extension VaultOptions {
    /// Opens the vault and brings its read models up to date, printing on stderr why they were
    /// rebuilt when they had to be.
    func openWithProjections(mode: Vault.AccessMode = .readOnly) throws -> Vault {
        let opened = mode == .readWrite ? try openForWriting() : try Vault.open(at: directory, passphrase: try passphrase(), mode: mode)
        _ = try opened.projections()
        reportProjectionNotice(of: opened)
        return opened
    }

    /// Opens the vault to write. A torn tail the log cut on the way (a crash's unfinished append,
    /// or a commit someone cut and put an older head record over) is said on stderr, with the
    /// file its bytes were kept in; the audit trail records it too.
    func openForWriting() throws -> Vault {
        let opened = try Vault.open(at: directory, passphrase: try passphrase(), mode: .readWrite)
        if let torn = opened.tornTail {
            Console.note("warning: the log ended in \(torn.length) bytes after its last commit (offset \(torn.offset)): a crash in a write, "
                         + "or a commit cut away; they were cut" + (torn.keptAs.map { " and kept in \(directory)/\($0)" } ?? ""))
        }
        return opened
    }

    func reportProjectionNotice(of vault: Vault, warning: String? = nil) {
        if let message = warning ?? vault.projectionNotice { Console.note("warning: \(message)") }
    }
}
