/// Process-wide settings an executable that imports should apply once at start-up.
public enum ProcessTuning {
    /// glibc gives each thread that allocates its own arena and keeps freed 1 MiB buffers in
    /// them; with the importer's decompression thread that inflated the peak RSS of a one-year
    /// import from 58 to 83 MiB (docs/benchmarks.md). One arena is enough for two threads.
    public static func limitMallocArenas() {
        #if os(Linux)
        _ = glibcMallopt(glibcArenaMax, 1)
        #endif
    }
}

#if os(Linux)
/// `mallopt(3)`, which Swift's Glibc module does not export; `M_ARENA_MAX` is -8 in malloc.h.
@_silgen_name("mallopt")
private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
private let glibcArenaMax: Int32 = -8
#endif
