/* bigmem.h - large zeroed buffers mapped and populated in one go.
 *
 * The compiler moves ~100 MB of weights through a few copies (the file, the
 * unpacked protobuf, the graph's constants, their fp16 and FRACTAL_Z forms,
 * the package). Touching that much fresh memory a page fault at a time is
 * the largest cost of compiling a big model: on a virtual machine a fault
 * taken from user space can cost 10-20 us, ~4 ms per MB, more than the
 * copies themselves. A bigmem buffer is its own anonymous mapping whose pages
 * the kernel faults in in one madvise(MADV_POPULATE_WRITE) call, ~0.2 ms per
 * MB. Buffers under BIGMEM_MIN_BYTES come from malloc, which is cheaper for
 * them, so callers need not choose. Either way the buffer is zero and needs
 * no memset.
 */
#ifndef COMMON_BIGMEM_H
#define COMMON_BIGMEM_H

#include <stddef.h>

enum { BIGMEM_MIN_BYTES = 256 << 10 };

/* A zeroed buffer of `bytes` bytes (0 is allowed), 64-byte aligned (page
 * aligned from BIGMEM_MIN_BYTES on), owned by the caller until bigmem_free;
 * NULL when the memory cannot be had (report ST_ERR_NOMEM). */
void *bigmem_alloc(size_t bytes);
/* As bigmem_alloc, but a mapped buffer's pages are not faulted in: they
 * come as they are first written, or by bigmem_populate. For a buffer that
 * is filled piece by piece while its source is given back piece by piece
 * (bigmem_discard), so that the two are never both resident in full. */
void *bigmem_reserve(size_t bytes);
/* Faults in the pages of [p, p + bytes) inside a bigmem buffer, as
 * bigmem_alloc does for a whole buffer, in one call however small the
 * range (a malloc'd buffer's pages are there already). */
void bigmem_populate(void *p, size_t bytes);
/* Gives the memory of [p, p + bytes) inside a bigmem buffer back to the
 * system while the buffer stays mapped (and owned): those bytes read as zero
 * afterwards. Only whole 2 MiB extents go (a buffer that size or larger is
 * made of them), so a smaller range may give back nothing. */
void bigmem_discard(void *p, size_t bytes);
/* Asks that [p, p + bytes) of a buffer from bigmem_reserve be backed by
 * small pages. For a buffer written out of order (a panel layout filled row
 * by row) whose resident part should grow with what is written: the first
 * write into a 2 MiB page would fault in the whole extent. Call it before
 * the first write. */
void bigmem_small_pages(void *p, size_t bytes);
/* Releases a buffer from bigmem_alloc; `bytes` must be the size it was asked
 * for (it tells a mapping from a malloc'd block). NULL is ignored. */
void bigmem_free(void *p, size_t bytes);

#endif
