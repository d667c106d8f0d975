// CRC32C for Keel's page and log checksums.
// Hardware path: the SSE4.2 `crc32` instruction, 8 bytes at a time in three interleaved streams
// (x86-64 only), chosen once at first use through __builtin_cpu_supports. Portable path:
// slicing-by-8 tables built at first use.
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

// Multiplies the 32x32 GF(2) matrix `mat` (one column per bit) by the vector `vec`.
static uint32_t gf2_times(const uint32_t *mat, uint32_t vec) {
    uint32_t sum = 0;
    while (vec) {
        if (vec & 1) sum ^= *mat;
        vec >>= 1;
        mat++;
    }
    return sum;
}

static void gf2_square(uint32_t *square, const uint32_t *mat) {
    for (int n = 0; n < 32; n++) square[n] = gf2_times(mat, mat[n]);
}

#if defined(__x86_64__)
// Three streams at once. The crc32 instruction takes 3 cycles but can start one every cycle, so
// one dependent chain uses a third of it: the hardware path splits a long buffer into three
// consecutive blocks, runs one chain over each in the same loop, and joins them with the
// "append N zero bytes" operator of the CRC (a linear map over GF(2), applied through tables).
// Pages (4 KiB) go through as five triples of 256-byte blocks and a tail.
#define LONG_BLOCK 8192
#define SHORT_BLOCK 256

// Tables of the operator that appends LONG_BLOCK (SHORT_BLOCK) zero bytes to a CRC register.
static uint32_t zeros_long[4][256];
static uint32_t zeros_short[4][256];
static int zeros_ready = 0;

// The operator for `len` zero bytes (`len` a power of two) into `op`.
static void zeros_operator(uint32_t *op, size_t len) {
    uint32_t odd[32], even[32];
    odd[0] = POLY;  // one zero bit: shift right, folding in the polynomial
    uint32_t row = 1;
    for (int n = 1; n < 32; n++) {
        odd[n] = row;
        row <<= 1;
    }
    gf2_square(even, odd);  // two zero bits
    gf2_square(odd, even);  // four zero bits
    // Each square doubles the count: 8 bits (one byte), 2 bytes, 4 bytes, ... until `len`.
    for (;;) {
        gf2_square(even, odd);
        len >>= 1;
        if (len == 0) {
            memcpy(op, even, sizeof even);
            return;
        }
        gf2_square(odd, even);
        len >>= 1;
        if (len == 0) {
            memcpy(op, odd, sizeof odd);
            return;
        }
    }
}

static void zeros_table(uint32_t table4[4][256], size_t len) {
    uint32_t op[32];
    zeros_operator(op, len);
    for (uint32_t n = 0; n < 256; n++) {
        table4[0][n] = gf2_times(op, n);
        table4[1][n] = gf2_times(op, n << 8);
        table4[2][n] = gf2_times(op, n << 16);
        table4[3][n] = gf2_times(op, n << 24);
    }
}

static void build_zeros(void) {
    zeros_table(zeros_long, LONG_BLOCK);
    zeros_table(zeros_short, SHORT_BLOCK);
    __atomic_store_n(&zeros_ready, 1, __ATOMIC_RELEASE);
}

static inline uint64_t shift(uint32_t table4[4][256], uint64_t crc) {
    return table4[0][crc & 0xff] ^ table4[1][(crc >> 8) & 0xff] ^ table4[2][(crc >> 16) & 0xff] ^
           table4[3][(crc >> 24) & 0xff];
}

static inline uint64_t load64(const unsigned char *p) {
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

// While at least three blocks remain: one chain per block, joined into `*crc`.
__attribute__((target("sse4.2")))
static inline void crc_triples(uint64_t *crc, const unsigned char **data, size_t *n, size_t block,
                               uint32_t zeros[4][256]) {
    uint64_t c0 = *crc;
    const unsigned char *p = *data;
    while (*n >= 3 * block) {
        uint64_t c1 = 0, c2 = 0;
        const unsigned char *end = p + block;
        do {
            c0 = __builtin_ia32_crc32di(c0, load64(p));
            c1 = __builtin_ia32_crc32di(c1, load64(p + block));
            c2 = __builtin_ia32_crc32di(c2, load64(p + 2 * block));
            p += 8;
        } while (p < end);
        c0 = shift(zeros, c0) ^ c1;
        c0 = shift(zeros, c0) ^ c2;
        p += 2 * block;
        *n -= 3 * block;
    }
    *crc = c0;
    *data = p;
}

__attribute__((target("sse4.2")))
static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t n) {
    if (!__atomic_load_n(&zeros_ready, __ATOMIC_ACQUIRE)) build_zeros();
    uint64_t c0 = ~crc & 0xffffffffu;
    crc_triples(&c0, &p, &n, LONG_BLOCK, zeros_long);
    crc_triples(&c0, &p, &n, SHORT_BLOCK, zeros_short);
    while (n >= 8) {
        c0 = __builtin_ia32_crc32di(c0, load64(p));
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c0;
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

uint32_t keel_crc32c_portable(uint32_t crc, const void *data, size_t length) {
    return crc_soft(crc, (const unsigned char *)data, length);
}

// The operator that appends `length` zero bytes (any length) to a CRC, built by squaring the
// one-byte operator along the bits of `length`, laid out as four byte tables (one per input
// byte) in `table`: 1,024 entries.
void keel_crc32c_zeros_table(uint32_t *table, size_t length) {
    uint32_t power[32], total[32], next[32];
    power[0] = POLY;  // one zero bit
    for (int n = 1; n < 32; n++) power[n] = 1u << (n - 1);
    for (int k = 0; k < 3; k++) {  // 2, 4, 8 zero bits: one byte
        gf2_square(next, power);
        memcpy(power, next, sizeof next);
    }
    for (int n = 0; n < 32; n++) total[n] = 1u << n;  // no zero bytes yet
    while (length) {
        if (length & 1) {
            for (int n = 0; n < 32; n++) next[n] = gf2_times(power, total[n]);
            memcpy(total, next, sizeof next);
        }
        length >>= 1;
        if (length) {
            gf2_square(next, power);
            memcpy(power, next, sizeof next);
        }
    }
    for (uint32_t n = 0; n < 256; n++) {
        table[n] = gf2_times(total, n);
        table[256 + n] = gf2_times(total, n << 8);
        table[512 + n] = gf2_times(total, n << 16);
        table[768 + n] = gf2_times(total, n << 24);
    }
}
