/* crc32c.h - CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the om
 * package's checksum. crc32c(0, p, n) checksums one buffer; pass a previous
 * result as `crc` to continue over several pieces. crc32c uses the SSE4.2
 * instruction when the CPU has it; crc32c_portable is the table-driven path
 * (same results; tests compare them). */
#ifndef COMMON_CRC32C_H
#define COMMON_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t crc32c(uint32_t crc, const void *data, size_t bytes);
uint32_t crc32c_portable(uint32_t crc, const void *data, size_t bytes);
/* The CRC of A followed by B from crc(A), crc(B) and B's length. */
uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, size_t len_b);

#endif
