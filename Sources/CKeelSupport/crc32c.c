// CRC32C for Keel's page and log checksums.
// Hardware path: the SSE4.2 `crc32` instruction, 8 bytes at a time (x86-64 only), chosen once at
// first use through __builtin_cpu_supports. Portable path: slicing-by-8 tables built at first use.
#include "keel_crc32c.h"
#include <string.h>

#define POLY 0x82F63B78u

static uint32_t table[8][256];
static int table_ready = 0;

static void build_tables(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ POLY : c >> 1;
        table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = table[0][n];
        for (int t = 1; t < 8; t++) {
            c = table[0][c & 0xff] ^ (c >> 8);
            table[t][n] = c;
        }
    }
    __atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
}

static uint32_t crc_soft(uint32_t crc, const unsigned char *p, size_t n) {
    if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE)) build_tables();
    crc = ~crc;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= crc;
        crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^ table[5][(w >> 16) & 0xff] ^
              table[4][(w >> 24) & 0xff] ^ table[3][(w >> 32) & 0xff] ^ table[2][(w >> 40) & 0xff] ^
              table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
        p += 8;
        n -= 8;
    }
    while (n--) crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t n) {
    uint64_t c = ~crc & 0xffffffffu;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = __builtin_ia32_crc32di(c, w);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
    return ~c32;
}
#endif

static int hw_state = -1; // -1 unknown, 0 no, 1 yes

int keel_crc32c_hardware(void) {
    int s = __atomic_load_n(&hw_state, __ATOMIC_RELAXED);
    if (s < 0) {
#if defined(__x86_64__)
        __builtin_cpu_init();
        s = __builtin_cpu_supports("sse4.2") ? 1 : 0;
#else
        s = 0;
#endif
        __atomic_store_n(&hw_state, s, __ATOMIC_RELAXED);
    }
    return s;
}

uint32_t keel_crc32c(uint32_t crc, const void *data, size_t length) {
#if defined(__x86_64__)
    if (keel_crc32c_hardware()) return crc_hw(crc, (const unsigned char *)data, length);
#endif
    return crc_soft(crc, (const unsigned char *)data, length);
}
