import Foundation
import Vault

/// `serve --backup DEST`: ships every commit to DEST within a few seconds. A thread looks at the
/// head record every second and runs a backup when it changed (a backup reads the committed
/// state without the writer lock, so the server's commits never wait for it); once more after the
/// server stopped. A failure is said once, and retried at the next change.
final class BackupShipper: @unchecked Sendable {
    let directory: String
    let destination: String
    private let passphrase: Passphrase
    /// Opened again after a failed run: a `passwd --rekey` while serving replaces the master key.
    private var vault: Vault?
    private let lock = NSLock()
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)
    private var shippedHead: [UInt8]?
    private var lastProblem: String?

    init(directory: String, passphrase: Passphrase, destination: String) throws {
        self.directory = directory
        self.destination = destination
        self.passphrase = passphrase
        vault = try Vault.open(at: directory, passphrase: passphrase)
    }

    func start() {
        let thread = Thread { [self] in
            while !lock.withLock({ stopping }) {
                shipIfChanged()
                Thread.sleep(forTimeInterval: 1)
            }
            finished.signal()
        }
        thread.name = "serve --backup"
        thread.start()
    }

    /// Stops the thread and ships what the server committed last.
    func stop() {
        lock.withLock { stopping = true }
        finished.wait()
        shipIfChanged()
    }

    private func shipIfChanged() {
        let head = Vault.commitMark(at: directory)
        guard let head, head != shippedHead else { return }
        do {
            let opened = try vault ?? Vault.open(at: directory, passphrase: passphrase)
            vault = opened
            try opened.backup(to: destination)
            shippedHead = head
            lastProblem = nil
        } catch {
            vault = nil
            let text = "\(error)"
            if text != lastProblem { Console.note("warning: serve --backup: \(text)") }
            lastProblem = text
        }
    }
}
