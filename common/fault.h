/* fault.h - fault-injection points for the compiler's test build.
 *
 * Issue 5 item 3: a test build makes the Nth allocation, write, fsync or
 * rename fail (or linkat, which names an O_TMPFILE file: its failure takes
 * the named-temporary path of common/atomic_file.c) and checks that atc reports it, leaves the old output
 * alone and no temporary file behind, and leaks nothing. The libc calls (malloc, calloc, realloc, write,
 * fsync, rename) are intercepted at link time by the test executable atc_fi (ld --wrap, tests/fault/fault.c),
 * so the library code carries no hook for them. The hooks in library code use this header: arena allocations,
 * most of which are carved out of an existing block and never reach malloc, and bigmem_alloc
 * (common/bigmem.h), whose buffers come from mmap or posix_memalign, which are not wrapped.
 * FAULT_INJECT(kind) is the constant 0 unless the file is compiled with ATC_FAULT_INJECTION (only
 * tests/CMakeLists.txt does, for atc_fi), so normal builds contain no trace
 * of it.
 */
#ifndef COMMON_FAULT_H
#define COMMON_FAULT_H

typedef enum fault_kind {
  FAULT_ALLOC,
  FAULT_WRITE,
  FAULT_FSYNC,
  FAULT_RENAME,
  FAULT_LINK,
  FAULT_KINDS
} fault_kind;

#ifdef ATC_FAULT_INJECTION
/* Counts one call of `kind`; returns 1 when this is the call that must fail
 * (tests/fault/fault.c: ATC_FAULT=kind:N). */
int fault_inject(fault_kind kind);
#define FAULT_INJECT(kind) fault_inject(kind)
#else
#define FAULT_INJECT(kind) 0
#endif

#endif
