import Foundation

/// Waits with an end: a test that waits on another process (its exit, its output, the other end
/// of a FIFO) fails by the deadline instead of hanging when that process dies or stalls.
public enum Deadline {
    /// Waits for `process` to end, for at most `seconds`; past that it is killed (SIGKILL) and
    /// false is returned.
    @discardableResult
    public static func wait(for process: Process, seconds: Double) -> Bool {
        let clock = ContinuousClock(), end = clock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
        while process.isRunning && clock.now < end { usleep(5_000) }
        guard process.isRunning else { return true }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return false
    }

    /// Opens the FIFO at `path` for writing once a reader has it open (a blocking open would wait
    /// for ever if the reader died first), trying for at most `seconds`; nil when no reader came.
    public static func openFIFOForWriting(_ path: String, seconds: Double) -> FileHandle? {
        let clock = ContinuousClock(), end = clock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
        while clock.now < end {
            let fd = open(path, O_WRONLY | O_NONBLOCK)
            if fd >= 0 {
                // Back to blocking writes: the reader is there.
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
                return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
            }
            guard errno == ENXIO else { return nil }
            usleep(5_000)
        }
        return nil
    }

    /// What `handle` has to read within `seconds` (`poll(2)` first, so a silent writer cannot
    /// block the read): nil when nothing came in time, empty at the end of the file.
    public static func read(_ handle: FileHandle, seconds: Double) -> Data? {
        var descriptor = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, Int32(seconds * 1000)) > 0 else { return nil }
        return handle.availableData
    }
}
