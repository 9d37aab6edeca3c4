/* crc32c.h - CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the om
 * package's checksum. crc32c(0, p, n) checksums one buffer; pass a previous
 * result as `crc` to continue over several pieces. */
#ifndef COMMON_CRC32C_H
#define COMMON_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t crc32c(uint32_t crc, const void *data, size_t bytes);

#endif
