#ifndef HEALTHVAULT_MEMORY_HINTS_H
#define HEALTHVAULT_MEMORY_HINTS_H

/// Asks for the cache line holding `address` to be brought in, without waiting for it and without
/// faulting: the import's identity table is tens of MiB, and a lookup into it waits ~200 ns for
/// memory on this machine; asked for a few samples ahead, the waits overlap
/// (docs/benchmarks.md, "FIT import"). Swift has no such hint of its own.
static inline void hv_prefetch(const void *address) {
    __builtin_prefetch(address, 1, 3);
}

#endif
