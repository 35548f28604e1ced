#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a file operation failed: the operation, the path and the system's error, never a file's
/// contents.
public enum StorageError: Error, Equatable, CustomStringConvertible {
    /// A system call failed.
    case io(operation: String, path: String, errno: Int32)
    /// Something already lives where a new file was to be created (`.createNew`, `link`).
    case alreadyExists(path: String)
    /// Nothing to open at this path.
    case notFound(path: String)

    public var description: String {
        switch self {
        case .io(let operation, let path, let errno): "\(operation) failed on \(path): \(systemErrorMessage(errno)) (errno \(errno))"
        case .alreadyExists(let path): "\(path) already exists; refusing to overwrite it"
        case .notFound(let path): "\(path) does not exist"
        }
    }
}

/// The system's message for an errno.
public func systemErrorMessage(_ code: Int32) -> String {
    String(cString: strerror(code))
}
