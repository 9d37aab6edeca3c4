/* dvpp_inflate.h - a zlib (RFC 1950) / deflate (RFC 1951) decompressor for
 * the PNG decoder (dvpp_png.c): pure, no heap use, for untrusted data.
 */
#ifndef ACL_DVPP_INFLATE_H
#define ACL_DVPP_INFLATE_H

#include <stddef.h>
#include <stdint.h>

/* Inflates the zlib stream in[0..n) into out, which it must fill exactly
 * (out_size bytes): the zlib header (deflate, no preset dictionary, its
 * check bits), stored, fixed and dynamic Huffman blocks, and the Adler-32
 * of the output are checked; a stream that ends early, holds an invalid
 * code, a distance before the start, or more or fewer bytes than out_size is
 * refused. 0, or -1 with the reason in err (errn bytes). Nothing is read at
 * or past n, nothing written at or past out_size. */
int dvpp_inflate_zlib(const uint8_t *in, size_t n, uint8_t *out, size_t out_size, char *err, size_t errn);

#endif
