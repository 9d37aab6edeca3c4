/* crc32c.c - CRC-32C: the SSE4.2 crc32 instruction when the CPU has it, else
 * table-driven slicing by 8 (about 2 GB/s).
 *
 * libomrt checks every partition's CRC at load, so for a large package the
 * load is CRC-bound (a 70 MB ResNet-50 took ~35 ms with the tables). On x86-64
 * the hardware path runs three independent crc32 streams over three thirds of
 * a long buffer (the instruction has a 3-cycle latency and a 1-cycle
 * throughput, so one stream leaves two thirds of the unit idle) and joins
 * them with the CRC combination rule crc(A.B) = crc(A) * x^(8|B|) + crc(B)
 * (mod P), the multiplication done bit by bit as in zlib's crc32_combine. The
 * choice is made once (pthread_once, CPUID leaf 1 ECX bit 20); both paths
 * give identical results (tests/unit/test_crc32c.c checks them against each
 * other and against the standard check value). The tables are built once. */
#include "crc32c.h"

#include <pthread.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <nmmintrin.h>
#endif

#define POLY 0x82F63B78u

static uint32_t table[8][256];
static uint32_t x2n_table[32]; /* x^(2^k) mod P, reflected */
static int use_hw;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

/* a * b mod P in the reflected representation (bit 31 is x^0). */
static uint32_t multmodp(uint32_t a, uint32_t b) {
  uint32_t m = 1u << 31, p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = b & 1 ? (b >> 1) ^ POLY : b >> 1;
  }
  return p;
}

/* x^(8 * bytes) mod P: the operator that appends `bytes` zero bytes. */
static uint32_t x8nmodp(size_t bytes) {
  uint32_t p = 1u << 31; /* x^0 */
  for (unsigned k = 3; bytes; bytes >>= 1, k++)
    if (bytes & 1) p = multmodp(x2n_table[k & 31], p);
  return p;
}

static void init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++)
      c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
    table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++)
      table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
  uint32_t p = 1u << 30; /* x^1 */
  for (int k = 0; k < 32; k++)
    x2n_table[k] = p, p = multmodp(p, p);
#if defined(__x86_64__) && defined(__GNUC__)
  unsigned a, b, c, d;
  use_hw = __get_cpuid(1, &a, &b, &c, &d) && ((c >> 20) & 1);
#endif
}

uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, size_t len_b) {
  pthread_once(&table_once, init);
  return multmodp(x8nmodp(len_b), crc_a) ^ crc_b;
}

uint32_t crc32c_portable(uint32_t crc, const void *data, size_t bytes) {
  pthread_once(&table_once, init);
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
  while (bytes--)
    crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
  return ~crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
static inline uint64_t load64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

/* One stream: the conditioned CRC of `bytes` bytes continuing from crc. */
__attribute__((target("sse4.2"))) static uint32_t hw_stream(uint32_t crc, const unsigned char *p,
                                                            size_t bytes) {
  uint64_t c = ~crc;
  for (; bytes >= 8; p += 8, bytes -= 8)
    c = _mm_crc32_u64(c, load64(p));
  uint32_t c32 = (uint32_t)c;
  while (bytes--)
    c32 = _mm_crc32_u8(c32, *p++);
  return ~c32;
}

enum { HW_SPLIT_MIN = 3 * 4096 }; /* below this one stream is as fast */

__attribute__((target("sse4.2"))) static uint32_t hw_crc(uint32_t crc, const unsigned char *p, size_t bytes) {
  if (bytes < HW_SPLIT_MIN) return hw_stream(crc, p, bytes);
  size_t third = bytes / 3 / 8 * 8;
  const unsigned char *p1 = p + third, *p2 = p1 + third;
  uint64_t c0 = ~crc, c1 = 0xffffffffu, c2 = 0xffffffffu; /* c1, c2: crc 0 conditioned */
  for (size_t i = 0; i < third; i += 8) {
    c0 = _mm_crc32_u64(c0, load64(p + i));
    c1 = _mm_crc32_u64(c1, load64(p1 + i));
    c2 = _mm_crc32_u64(c2, load64(p2 + i));
  }
  uint32_t r = crc32c_combine(~(uint32_t)c0, ~(uint32_t)c1, third);
  r = crc32c_combine(r, ~(uint32_t)c2, third);
  return hw_stream(r, p2 + third, bytes - 3 * third);
}
#endif

uint32_t crc32c(uint32_t crc, const void *data, size_t bytes) {
  pthread_once(&table_once, init);
#if defined(__x86_64__) && defined(__GNUC__)
  if (use_hw) return hw_crc(crc, data, bytes);
#endif
  return crc32c_portable(crc, data, bytes);
}
