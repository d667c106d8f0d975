#ifndef KEEL_CRC32C_H
#define KEEL_CRC32C_H
#include <stddef.h>
#include <stdint.h>

/// Extends a CRC32C (Castagnoli, reflected polynomial 0x82F63B78) over `length` bytes.
/// Start with crc = 0; the value passed in and returned is the finished (inverted) CRC, so
/// calls chain: keel_crc32c(keel_crc32c(0, a, n), b, m) == keel_crc32c(0, a ++ b, n + m).
/// Uses the SSE4.2 crc32 instruction when the CPU has it, a slicing-by-8 table otherwise.
uint32_t keel_crc32c(uint32_t crc, const void *data, size_t length);

/// The table path alone, whatever the CPU (tests compare the hardware path with it).
uint32_t keel_crc32c_portable(uint32_t crc, const void *data, size_t length);

/// 1 when the hardware path is in use (reported by the benchmark), 0 for the table fallback.
int keel_crc32c_hardware(void);

/// Fills `table` (1,024 entries: four tables of 256, one per byte of a CRC) with the operator
/// that appends `length` zero bytes to a CRC32C: for finished CRCs a of A and b of B (|B| =
/// `length`), the CRC of A ++ B is zeros(a) ^ b, where zeros(c) = table[c & 0xff] ^
/// table[256 + ((c >> 8) & 0xff)] ^ table[512 + ((c >> 16) & 0xff)] ^ table[768 + (c >> 24)].
void keel_crc32c_zeros_table(uint32_t *table, size_t length);

#endif
