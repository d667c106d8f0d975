#ifndef KEEL_PREFETCH_H
#define KEEL_PREFETCH_H
#include <stddef.h>

/// Asks the CPU to bring [p, p + length) into its caches without waiting for it (a hint: no
/// fault, no effect on results). For lookups that know several pages they will search before
/// searching the first, so that the pages' cache misses overlap instead of following each other.
static inline void keel_prefetch(const void *p, size_t length) {
    for (size_t i = 0; i < length; i += 64) __builtin_prefetch((const char *)p + i, 0, 3);
}

#endif
