import Foundation
import Vault

extension VaultOptions {
    /// Opens the vault and brings its read models up to date, printing on stderr why they were
    /// rebuilt when they had to be.
    func openWithProjections(mode: Vault.AccessMode = .readOnly) throws -> Vault {
        let opened = try Vault.open(at: directory, passphrase: try passphrase(), mode: mode)
        _ = try opened.projections()
        reportProjectionNotice(of: opened)
        return opened
    }

    func reportProjectionNotice(of vault: Vault, warning: String? = nil) {
        if let message = warning ?? vault.projectionNotice { Console.note("warning: \(message)") }
    }
}
