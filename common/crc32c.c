/* crc32c.c - table-driven CRC-32C, slicing by 8 (about 2 GB/s; the om's
 * weights are checked once at load). The tables are built once. */
#include "crc32c.h"

#include <pthread.h>

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void build_table(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++) table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
}

uint32_t crc32c(uint32_t crc, const void *data, size_t bytes) {
  pthread_once(&table_once, build_table);
  const unsigned char *p = data;
  crc = ~crc;
  while (bytes >= 8) {
    uint32_t lo = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    lo ^= crc;
    crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
          table[4][lo >> 24] ^ table[3][p[4]] ^ table[2][p[5]] ^ table[1][p[6]] ^ table[0][p[7]];
    p += 8;
    bytes -= 8;
  }
  while (bytes--) crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
  return ~crc;
}
