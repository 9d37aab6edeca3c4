/* test_crc32c.c - CRC-32C: the standard check value, the hardware path
 * (SSE4.2, three streams joined by crc32c_combine) against the table-driven
 * one over every length up to 200 and long buffers at odd offsets and
 * lengths (around the three-way split threshold), continuation over pieces,
 * and crc32c_combine itself. */
#include <stdlib.h>
#include <string.h>

#include "common/crc32c.h"
#include "support.h"

int main(void) {
  CHECK(crc32c(0, "123456789", 9) == 0xE3069283u);
  CHECK(crc32c_portable(0, "123456789", 9) == 0xE3069283u);
  CHECK(crc32c(0, "", 0) == 0);

  size_t n = 1 << 20;
  unsigned char *buf = malloc(n + 16);
  uint64_t s = 0x9e3779b97f4a7c15u;
  for (size_t i = 0; i < n + 16; i++)
    s = s * 6364136223846793005u + 1, buf[i] = (unsigned char)(s >> 33);

  int bad = 0;
  for (size_t len = 0; len <= 200; len++)
    for (size_t off = 0; off < 8; off++)
      bad += crc32c(7, buf + off, len) != crc32c_portable(7, buf + off, len);
  CHECK(bad == 0);
  const size_t lens[] = {3 * 4096 - 1, 3 * 4096, 3 * 4096 + 1, 3 * 4096 + 23, 65537, 999999, 1 << 20};
  for (size_t i = 0; i < sizeof lens / sizeof *lens; i++)
    for (size_t off = 0; off < 3; off++) {
      uint32_t hw = crc32c(0, buf + off, lens[i]), sw = crc32c_portable(0, buf + off, lens[i]);
      CHECK(hw == sw);
      if (hw != sw) test_note("len %zu off %zu: %08x != %08x", lens[i], off, hw, sw);
    }
  /* continuation and combination */
  uint32_t whole = crc32c(0, buf, n);
  CHECK(crc32c(crc32c(0, buf, 12345), buf + 12345, n - 12345) == whole);
  CHECK(crc32c_combine(crc32c(0, buf, 400000), crc32c(0, buf + 400000, n - 400000), n - 400000) == whole);
  CHECK(crc32c_combine(whole, crc32c(0, "", 0), 0) == whole);
  /* a single flipped bit anywhere changes the CRC */
  for (size_t bit = 0; bit < 64; bit++) {
    size_t at = (bit * 16411) % n;
    buf[at] ^= (unsigned char)(1u << (bit % 8));
    CHECK(crc32c(0, buf, n) != whole);
    buf[at] ^= (unsigned char)(1u << (bit % 8));
  }
  free(buf);
  return test_summary("crc32c");
}
