/// Names of the log's files inside a vault directory.
public struct LogDirectory: Sendable {
    /// The directory holding the files.
    public let path: String

    public init(_ path: String) {
        self.path = path
    }

    /// Frames, appended only.
    public var log: String { path + "/events.log" }
    /// The last committed position, replaced atomically after each commit.
    public var head: String { path + "/events.head" }
    /// The data keys (`KeyTable`), replaced atomically when keys are added or destroyed.
    public var keys: String { path + "/keys.sealed" }
    /// The key table an erase replaced, named only until its bytes are zeroed.
    public var oldKeys: String { path + "/keys.sealed.old" }
    /// The checkpoint of the committed frames' headers (`FrameIndex`), rebuilt when unusable.
    public var frameIndex: String { path + "/frames.index" }
    /// Held with `flock` by the one writer.
    public var lock: String { path + "/events.lock" }
    /// Held with `flock` by a running `vaultctl serve`, which takes `lock` only while it commits.
    public var serverLock: String { path + "/serve.lock" }
    /// Prefix of the files a writer keeps the bytes of a torn tail in before cutting them
    /// (`events.log.torn.1`, `.2`, ...): what a crash left, or what someone cut a committed frame to.
    public static let tornPrefix = "events.log.torn."
    /// Names of the files commands waiting for `lock` held by the server make, one each, named
    /// with their process id (empty).
    public static let lockWantedPrefix = "events.lock.wanted."
    /// The file process `pid` makes while it waits for `lock`.
    public func lockWanted(by pid: Int32) -> String { path + "/" + Self.lockWantedPrefix + String(pid) }
}
