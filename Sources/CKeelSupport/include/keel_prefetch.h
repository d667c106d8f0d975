#ifndef KEEL_PREFETCH_H
#define KEEL_PREFETCH_H
#include <stddef.h>

/// Asks the CPU to bring [p, p + length) into its caches without waiting for it (a hint: no
/// fault, no effect on results). For lookups that know several pages they will search before
/// searching the first, so that the pages' cache misses overlap instead of following each other.
/// The same lines (one per 64 bytes from `p`) asked for four per loop step: a page is 64 lines,
/// and the loop's own count and branch, not the prefetches, were most of its instructions.
static inline void keel_prefetch(const void *p, size_t length) {
    const char *c = (const char *)p;
    size_t i = 0;
    for (; i + 192 < length; i += 256) {
        __builtin_prefetch(c + i, 0, 3);
        __builtin_prefetch(c + i + 64, 0, 3);
        __builtin_prefetch(c + i + 128, 0, 3);
        __builtin_prefetch(c + i + 192, 0, 3);
    }
    for (; i < length; i += 64) __builtin_prefetch(c + i, 0, 3);
}

/// Asks the CPU to bring the cache line at `p` into its caches for writing (a hint, as above).
/// For an object whose reference count is about to change: a retain or release is an atomic
/// update, which waits for a cold line before anything after it proceeds, so a loop over many
/// cold objects (the page table's buffers at a commit) pays one full memory
/// latency per object unless the line was asked for a few objects earlier.
static inline void keel_prefetch_write(const void *p) {
    __builtin_prefetch(p, 1, 3);
}

#endif
