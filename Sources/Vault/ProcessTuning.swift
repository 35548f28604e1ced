#if canImport(Glibc)
import Glibc
#endif

/// Process-wide settings an executable that imports should apply once at start-up.
public enum ProcessTuning {
    /// glibc gives each thread that allocates its own arena and keeps freed 1 MiB buffers in
    /// them; with the importer's decompression thread that inflated the peak RSS of a one-year
    /// import from 58 to 83 MiB (docs/benchmarks-history.md). One arena is enough for two threads.
    public static func limitMallocArenas() {
        #if os(Linux)
        _ = glibcMallopt(glibcArenaMax, 1)
        #endif
    }

    /// Keeps keys and health data in this process's memory out of reach of core dumps and of
    /// other processes of the same user that attach with ptrace (`PR_SET_DUMPABLE` 0 also makes
    /// `/proc/PID/mem` readable by root only), and sets the core-file size limit to 0.
    public static func hardenAgainstMemoryDumps() {
        #if os(Linux)
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none)
        _ = glibcPrctl(glibcPrSetDumpable, 0, 0, 0, 0)
        #endif
    }

    /// Whether `hardenAgainstMemoryDumps` is in force (for tests).
    public static var isDumpable: Bool {
        #if os(Linux)
        return glibcPrctl(glibcPrGetDumpable, 0, 0, 0, 0) != 0
        #else
        return true
        #endif
    }
}

#if os(Linux)
/// `mallopt(3)`, which Swift's Glibc module does not export; `M_ARENA_MAX` is -8 in malloc.h.
@_silgen_name("mallopt")
private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
private let glibcArenaMax: Int32 = -8

/// `prctl(2)`, variadic in C; declared with the five words the kernel takes.
@_silgen_name("prctl")
private func glibcPrctl(_ option: Int32, _ a2: UInt, _ a3: UInt, _ a4: UInt, _ a5: UInt) -> Int32
private let glibcPrSetDumpable: Int32 = 4
private let glibcPrGetDumpable: Int32 = 3
#endif
