#ifndef HEALTHVAULT_BYTE_SCAN_H
#define HEALTHVAULT_BYTE_SCAN_H

#include <stddef.h>
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/// The index of the first byte of `bytes[0..<count]` that can end or escape an XML attribute
/// value quoted with `quote`: the quote, '&', '<' or a byte below 0x20; `count` when there is
/// none. Sixteen bytes a step with SSE2 (every x86-64 processor has it): the Swift tokenizer's
/// eight-byte word test took 0.8 of the 11.3 G instructions of a one-year import
/// (docs/benchmarks-history.md). Elsewhere, and for a last partial block, byte by byte.
static inline size_t hv_attribute_value_end(const uint8_t *bytes, size_t count, uint8_t quote) {
    size_t i = 0;
#if defined(__SSE2__)
    const __m128i quotes = _mm_set1_epi8((char)quote);
    const __m128i ampersands = _mm_set1_epi8('&');
    const __m128i angles = _mm_set1_epi8('<');
    // Unsigned b < 0x20 as a signed comparison: (b ^ 0x80) < (0x20 ^ 0x80).
    const __m128i flip = _mm_set1_epi8((char)0x80);
    const __m128i below = _mm_set1_epi8((char)(0x20 ^ 0x80));
    for (; i + 16 <= count; i += 16) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(bytes + i));
        __m128i hits = _mm_or_si128(_mm_cmpeq_epi8(v, quotes), _mm_cmpeq_epi8(v, ampersands));
        hits = _mm_or_si128(hits, _mm_cmpeq_epi8(v, angles));
        hits = _mm_or_si128(hits, _mm_cmplt_epi8(_mm_xor_si128(v, flip), below));
        const int mask = _mm_movemask_epi8(hits);
        if (mask != 0) return i + (size_t)__builtin_ctz((unsigned)mask);
    }
#endif
    for (; i < count; i++) {
        const uint8_t b = bytes[i];
        if (b == quote || b == '&' || b == '<' || b < 0x20) return i;
    }
    return count;
}

#endif
