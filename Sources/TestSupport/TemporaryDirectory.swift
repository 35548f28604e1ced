import Foundation

/// A fresh directory per test, removed when the value goes away.
public final class TemporaryDirectory {
    /// The directory's path.
    public let path: String

    public init(_ label: String = #function) {
        let safe = label.filter { $0.isLetter || $0.isNumber }
        path = FileManager.default.temporaryDirectory
            .appendingPathComponent("hv-\(safe.prefix(40))-\(UUID().uuidString.prefix(8))").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The path of `name` inside the directory.
    public func file(_ name: String) -> String { path + "/" + name }
}
