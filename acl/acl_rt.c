/* acl_rt.c - AscendCL's runtime resources (acl.h, acl_rt.h): aclInit and
 * aclFinalize, the one device, contexts, streams as handles, and memory.
 *
 * The registry (acl_internal.h) lives here: lists of contexts, streams,
 * models and allocations under one mutex. The calling thread's context is
 * a thread-local (pointer, serial) pair checked against the registry on
 * every use, so a context destroyed meanwhile reads as "no context".
 *
 * Memory: aclrtMalloc and aclrtMallocHost hand out 64-byte aligned host
 * memory and record it (address, size, device or host); the record is what
 * lets aclrtMemcpy and the model calls check that memory is of the kind
 * they need and that a range stays inside its allocation, as the chip's
 * separate memories would force. Memory nobody allocated here is plain
 * host memory (the application's malloc or stack).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl_internal.h"

enum { ALIGN = 64 };
#define DEFAULT_SOC "Ascend310" /* aclrtGetSocName before any model is loaded */

typedef struct alloc {
  struct alloc *next;
  void *base;
  size_t size; /* bytes asked for */
  int device;  /* 1: aclrtMalloc, 0: aclrtMallocHost */
} alloc;

typedef struct stream_ref {
  struct stream_ref *next;
  acl_stream *s;
} stream_ref;

static struct {
  pthread_mutex_t mu;
  /* acl_model.users: its own lock, because a stream's thread releases a
   * model while the registry lock may be held by a caller waiting for that
   * stream. */
  pthread_mutex_t users_mu;
  pthread_cond_t unused; /* a model's users dropped to 0 */
  int initialized;
  uint64_t serial;    /* last context serial handed out */
  uint32_t model_id;  /* last model id handed out */
  int device_refs;    /* aclrtSetDevice calls not yet reset */
  int default_device; /* aclInit's "defaultDevice": a thread without a context uses device 0's */
  acl_context *contexts;
  stream_ref *streams; /* every stream but the contexts' defaults */
  acl_model *models;
  alloc *allocs;
  char soc[64]; /* aclrtGetSocName */
} g = {.soc = DEFAULT_SOC,
       .mu = PTHREAD_MUTEX_INITIALIZER,
       .users_mu = PTHREAD_MUTEX_INITIALIZER,
       .unused = PTHREAD_COND_INITIALIZER};

static _Thread_local struct {
  acl_context *ctx;
  uint64_t serial;
} current;

aclError acl_enter(const char *call) {
  pthread_mutex_lock(&g.mu);
  if (g.initialized) return ACL_SUCCESS;
  pthread_mutex_unlock(&g.mu);
  return acl_fail(ACL_ERROR_UNINITIALIZE, "%s: aclInit has not been called", call);
}

void acl_leave(void) { pthread_mutex_unlock(&g.mu); }

aclError acl_leave_with(aclError e) {
  pthread_mutex_unlock(&g.mu);
  return e;
}

aclError acl_enter_module(const char *call, pthread_mutex_t *mu) {
  aclError e = acl_enter(call);
  if (e) return e;
  acl_leave();
  pthread_mutex_lock(mu);
  return ACL_SUCCESS;
}

static acl_context *find_context(const void *handle) {
  for (acl_context *c = g.contexts; c; c = c->next)
    if (c == handle) return c;
  return NULL;
}

static acl_context *default_context(void);
static acl_context *new_context(int is_default);

/* (with aclInit's "defaultDevice", a thread that never set a context gets
 * the device's default one, created as aclrtSetDevice would) */
acl_context *acl_current(void) {
  acl_context *c = find_context(current.ctx);
  if (!current.ctx && g.default_device) return (c = default_context()) ? c : new_context(1);
  return c && c->serial == current.serial ? c : NULL;
}

static void make_current(acl_context *c) {
  current.ctx = c;
  current.serial = c ? c->serial : 0;
}

/* --- models */

void acl_add_model(acl_model *m) {
  m->id = ++g.model_id;
  m->next = g.models;
  g.models = m;
}

acl_model *acl_find_model(uint32_t id) {
  for (acl_model *m = g.models; m; m = m->next)
    if (m->id == id) return m;
  return NULL;
}

void acl_remove_model(acl_model *m) {
  for (acl_model **p = &g.models; *p; p = &(*p)->next)
    if (*p == m) {
      *p = m->next;
      break;
    }
  pthread_mutex_lock(&g.users_mu);
  while (m->users > 0)
    pthread_cond_wait(&g.unused, &g.users_mu);
  pthread_mutex_unlock(&g.users_mu);
}

void acl_model_use(acl_model *m) {
  pthread_mutex_lock(&g.users_mu);
  m->users++;
  pthread_mutex_unlock(&g.users_mu);
}

void acl_model_release(acl_model *m) {
  pthread_mutex_lock(&g.users_mu);
  if (--m->users == 0) pthread_cond_broadcast(&g.unused);
  pthread_mutex_unlock(&g.users_mu);
}

/* --- memory */

static alloc *find_alloc(const void *p) {
  for (alloc *a = g.allocs; a; a = a->next)
    if ((const char *)p >= (const char *)a->base && (const char *)p < (const char *)a->base + a->size)
      return a;
  return NULL;
}

int acl_device_range(const void *p, size_t n, const void **base, size_t *size) {
  alloc *a = find_alloc(p);
  if (!a || !a->device) return 0;
  *base = a->base;
  *size = a->size;
  return n <= a->size - (size_t)((const char *)p - (const char *)a->base) ? 1 : -1;
}

static aclError allocate(const char *call, const char *what, void **out, size_t size, int device) {
  if (!out) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, what);
  *out = NULL;
  if (size == 0) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: size is 0", call);
  if (!acl_current())
    return acl_fail(ACL_ERROR_RT_CONTEXT_NULL,
                    "%s: no current context (call aclrtSetDevice or aclrtCreateContext)", call);
  alloc *a = malloc(sizeof *a);
  void *p = size <= SIZE_MAX - ALIGN ? aligned_alloc(ALIGN, (size + ALIGN - 1) / ALIGN * ALIGN) : NULL;
  if (!a || !p) {
    free(a);
    free(p);
    return acl_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory for %zu bytes", call, size);
  }
  *a = (alloc){g.allocs, p, size, device};
  g.allocs = a;
  *out = p;
  return ACL_SUCCESS;
}

static aclError release(const char *call, void *p, int device) {
  if (!p) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, device ? "devPtr" : "hostPtr");
  for (alloc **ap = &g.allocs; *ap; ap = &(*ap)->next) {
    alloc *a = *ap;
    if (a->base != p || a->device != device) continue;
    *ap = a->next;
    free(a->base);
    free(a);
    return ACL_SUCCESS;
  }
  alloc *a = find_alloc(p);
  return acl_fail(ACL_ERROR_RT_MEMORY_FREE, "%s: %p is not the start of an %s allocation%s", call, p,
                  device ? "aclrtMalloc" : "aclrtMallocHost",
                  !a                    ? ""
                  : a->device != device ? (a->device ? " (it is device memory: aclrtFree)"
                                                     : " (it is host memory: aclrtFreeHost)")
                                        : " (it points inside one)");
}

/* A page policy (0 .. ACL_MEM_MALLOC_HUGE1G_ONLY_P2P), or HUGE_FIRST,
 * HUGE_ONLY or NORMAL_ONLY ored with one memory type (acl_rt.h). */
static int valid_policy(unsigned policy) {
  unsigned type = policy & (ACL_MEM_TYPE_LOW_BAND_WIDTH | ACL_MEM_TYPE_HIGH_BAND_WIDTH),
           page = policy & ~type;
  if (type == (ACL_MEM_TYPE_LOW_BAND_WIDTH | ACL_MEM_TYPE_HIGH_BAND_WIDTH)) return 0;
  return type ? page <= ACL_MEM_MALLOC_NORMAL_ONLY : page <= ACL_MEM_MALLOC_HUGE1G_ONLY_P2P;
}

aclError acl_malloc_device(const char *call, void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
  aclError e = acl_enter(call);
  if (e) return e;
  if (!valid_policy((unsigned)policy))
    return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM,
                                   "%s: policy 0x%x is not an aclrtMemMallocPolicy (a page policy, or "
                                   "HUGE_FIRST, HUGE_ONLY or NORMAL_ONLY | one ACL_MEM_TYPE_*_BAND_WIDTH)",
                                   call, (unsigned)policy));
  return acl_leave_with(allocate(call, "devPtr", devPtr, size, 1));
}

aclError acl_alloc_device_locked(const char *call, void **devPtr, size_t size) {
  return allocate(call, "devPtr", devPtr, size, 1);
}

void acl_free_device_locked(void *devPtr) { release("(rollback)", devPtr, 1); }

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
  return acl_malloc_device("aclrtMalloc", devPtr, size, policy);
}

aclError aclrtMallocCached(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
  return acl_malloc_device("aclrtMallocCached", devPtr, size, policy);
}

aclError acl_free_device(const char *call, void *devPtr) {
  aclError e = acl_enter(call);
  return e ? e : acl_leave_with(release(call, devPtr, 1));
}

aclError aclrtFree(void *devPtr) { return acl_free_device("aclrtFree", devPtr); }

aclError aclrtMallocHost(void **hostPtr, size_t size) {
  aclError e = acl_enter("aclrtMallocHost");
  return e ? e : acl_leave_with(allocate("aclrtMallocHost", "hostPtr", hostPtr, size, 0));
}

aclError aclrtFreeHost(void *hostPtr) {
  aclError e = acl_enter("aclrtFreeHost");
  return e ? e : acl_leave_with(release("aclrtFreeHost", hostPtr, 0));
}

/* Checks that `count` bytes at p are device memory (want 1) or not (want
 * 0); `what` names the argument. */
static aclError check_side(const char *call, const char *what, const void *p, size_t count, int want,
                           const char *kind) {
  const void *base = NULL;
  size_t size = 0;
  int dev = acl_device_range(p, count, &base, &size);
  if (dev < 0)
    return acl_fail(
        ACL_ERROR_RT_PARAM_INVALID,
        "%s: %s: %zu bytes at %p run past the end of its aclrtMalloc allocation (%zu bytes at %p)", call,
        what, count, p, size, base);
  if (want >= 0 && dev != want)
    return acl_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: kind %s, but %s %p is %s", call, kind, what, p,
                    dev ? "device memory (aclrtMalloc)" : "not device memory (aclrtMalloc)");
  return ACL_SUCCESS;
}

static const char *const kind_names[] = {"ACL_MEMCPY_HOST_TO_HOST", "ACL_MEMCPY_HOST_TO_DEVICE",
                                         "ACL_MEMCPY_DEVICE_TO_HOST", "ACL_MEMCPY_DEVICE_TO_DEVICE",
                                         "ACL_MEMCPY_DEFAULT"};

/* The checks of every copy (under the lock): dspan bytes at dst and sspan
 * at src, of the kinds `kind` names. */
static aclError check_spans(const char *call, void *dst, size_t dspan, const void *src, size_t sspan,
                            aclrtMemcpyKind kind) {
  if (!dst) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: dst is NULL", call);
  if (!src) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: src is NULL", call);
  if ((int)kind < ACL_MEMCPY_HOST_TO_HOST || (int)kind > ACL_MEMCPY_DEFAULT)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: kind %d is not an aclrtMemcpyKind", call, (int)kind);
  int dst_dev = kind == ACL_MEMCPY_DEFAULT
                    ? -1
                    : kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  int src_dev = kind == ACL_MEMCPY_DEFAULT
                    ? -1
                    : kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  aclError e = check_side(call, "dst", dst, dspan, dst_dev, kind_names[kind]);
  return e ? e : check_side(call, "src", src, sspan, src_dev, kind_names[kind]);
}

/* The checks of aclrtMemcpy and aclrtMemcpyAsync (under the lock). */
static aclError check_copy(const char *call, void *dst, size_t destMax, const void *src, size_t count,
                           aclrtMemcpyKind kind) {
  if (dst && src && count > destMax)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: count %zu exceeds destMax %zu", call, count, destMax);
  return check_spans(call, dst, count, src, count, kind);
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind) {
  aclError e = acl_enter("aclrtMemcpy");
  if (e) return e;
  if ((e = check_copy("aclrtMemcpy", dst, destMax, src, count, kind))) return acl_leave_with(e);
  acl_leave();
  memmove(dst, src, count);
  return ACL_SUCCESS;
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream) {
  aclError e = acl_enter("aclrtMemcpyAsync");
  if (e) return e;
  acl_stream *s = NULL;
  if ((e = check_copy("aclrtMemcpyAsync", dst, destMax, src, count, kind)) ||
      (e = acl_resolve_stream("aclrtMemcpyAsync", stream, &s)))
    return acl_leave_with(e);
  if (kind == ACL_MEMCPY_HOST_TO_HOST)
    return acl_leave_with(acl_fail(ACL_ERROR_RT_PARAM_INVALID,
                                   "aclrtMemcpyAsync: kind ACL_MEMCPY_HOST_TO_HOST: host-to-host copies are "
                                   "synchronous only (aclrtMemcpy)"));
  acl_op *op = calloc(1, sizeof *op);
  if (!op) return acl_leave_with(acl_fail(ACL_ERROR_BAD_ALLOC, "aclrtMemcpyAsync: out of memory"));
  *op = (acl_op){.kind = ACL_OP_COPY, .dst = dst, .src = src, .count = count};
  acl_stream_push(s, op);
  acl_leave();
  return ACL_SUCCESS;
}

/* aclrtMemset's memory: device memory or aclrtMallocHost's (AscendCL
 * tells them apart by the address), `count` bytes inside the allocation;
 * other host memory is refused (AscendCL leaves it undefined). Under the lock. */
static aclError check_memset(const char *call, const void *p, size_t count) {
  alloc *a = find_alloc(p);
  const char *what = a && a->device ? "aclrtMalloc" : "aclrtMallocHost";
  if (!a)
    return acl_fail(
        ACL_ERROR_RT_PARAM_INVALID,
        "%s: devPtr %p is neither device memory (aclrtMalloc) nor host memory from aclrtMallocHost", call, p);
  if (count > a->size - (size_t)((const char *)p - (const char *)a->base))
    return acl_fail(ACL_ERROR_RT_PARAM_INVALID,
                    "%s: devPtr: %zu bytes at %p run past the end of its %s allocation (%zu bytes at %p)",
                    call, count, p, what, a->size, a->base);
  return ACL_SUCCESS;
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count) {
  aclError e = acl_enter("aclrtMemset");
  if (e) return e;
  if (!devPtr) return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemset: devPtr is NULL"));
  if (count > maxCount)
    return acl_leave_with(
        acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemset: count %zu exceeds maxCount %zu", count, maxCount));
  if ((e = check_memset("aclrtMemset", devPtr, count))) return acl_leave_with(e);
  acl_leave();
  memset(devPtr, (int)(uint8_t)value, count);
  return ACL_SUCCESS;
}

aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream) {
  const char *call = "aclrtMemsetAsync";
  aclError e = acl_enter(call);
  if (e) return e;
  acl_stream *s = NULL;
  if (!devPtr) return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "%s: devPtr is NULL", call));
  if (count > maxCount)
    return acl_leave_with(
        acl_fail(ACL_ERROR_INVALID_PARAM, "%s: count %zu exceeds maxCount %zu", call, count, maxCount));
  if ((e = check_side(call, "devPtr", devPtr, count, 1, "(device memory)")) ||
      (e = acl_resolve_stream(call, stream, &s)))
    return acl_leave_with(e);
  acl_op *op = calloc(1, sizeof *op);
  if (!op) return acl_leave_with(acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call));
  *op = (acl_op){.kind = ACL_OP_MEMSET, .dst = devPtr, .count = count, .value = (int)(uint8_t)value};
  acl_stream_push(s, op);
  return acl_leave_with(ACL_SUCCESS);
}

/* The checks of aclrtMemcpy2d and aclrtMemcpy2dAsync (under the lock): each
 * side spans (height - 1) * pitch + width bytes. */
static aclError check_copy2d(const char *call, void *dst, size_t dpitch, const void *src, size_t spitch,
                             size_t width, size_t height, aclrtMemcpyKind kind) {
  if (width == 0 || height == 0)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: width %zu, height %zu: both must be > 0", call, width,
                    height);
  if (width > dpitch || width > spitch)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: width %zu exceeds %s %zu", call, width,
                    width > dpitch ? "dpitch" : "spitch", width > dpitch ? dpitch : spitch);
  if (height - 1 > (SIZE_MAX - width) / (dpitch > spitch ? dpitch : spitch))
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: height %zu x pitch overflows", call, height);
  return check_spans(call, dst, (height - 1) * dpitch + width, src, (height - 1) * spitch + width, kind);
}

aclError aclrtMemcpy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                       aclrtMemcpyKind kind) {
  aclError e = acl_enter("aclrtMemcpy2d");
  if (e) return e;
  if ((e = check_copy2d("aclrtMemcpy2d", dst, dpitch, src, spitch, width, height, kind)))
    return acl_leave_with(e);
  acl_leave();
  for (size_t r = 0; r < height; r++)
    memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
  return ACL_SUCCESS;
}

aclError aclrtMemcpy2dAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                            size_t height, aclrtMemcpyKind kind, aclrtStream stream) {
  const char *call = "aclrtMemcpy2dAsync";
  aclError e = acl_enter(call);
  if (e) return e;
  acl_stream *s = NULL;
  if ((e = check_copy2d(call, dst, dpitch, src, spitch, width, height, kind)) ||
      (e = acl_resolve_stream(call, stream, &s)))
    return acl_leave_with(e);
  acl_op *op = calloc(1, sizeof *op);
  if (!op) return acl_leave_with(acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call));
  *op = (acl_op){.kind = ACL_OP_COPY2D,
                 .dst = dst,
                 .src = src,
                 .count = width,
                 .dpitch = dpitch,
                 .spitch = spitch,
                 .height = height};
  acl_stream_push(s, op);
  return acl_leave_with(ACL_SUCCESS);
}

/* aclrtMemFlush and aclrtMemInvalidate: the memory is coherent; the range
 * must be device memory. */
static aclError check_cached(const char *call, void *devPtr, size_t size) {
  aclError e = acl_enter(call);
  if (e) return e;
  if (!devPtr || size == 0)
    return acl_leave_with(
        acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", call, !devPtr ? "devPtr is NULL" : "size is 0"));
  return acl_leave_with(check_side(call, "devPtr", devPtr, size, 1, "(device memory)"));
}

aclError aclrtMemFlush(void *devPtr, size_t size) { return check_cached("aclrtMemFlush", devPtr, size); }
aclError aclrtMemInvalidate(void *devPtr, size_t size) {
  return check_cached("aclrtMemInvalidate", devPtr, size);
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total) {
  aclError e = acl_enter("aclrtGetMemInfo");
  if (e) return e;
  acl_leave();
  if ((int)attr < ACL_DDR_MEM || (int)attr > ACL_HBM_MEM_P2P_NORMAL)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo: attr %d is not an aclrtMemAttr", (int)attr);
  if (!free || !total)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo: %s is NULL", !free ? "free" : "total");
  long page = sysconf(_SC_PAGESIZE), all = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES);
  if (page <= 0 || all <= 0 || avail < 0)
    return acl_fail(ACL_ERROR_RT_FAILURE, "aclrtGetMemInfo: the host's memory size is unknown");
  *total = (size_t)all * (size_t)page;
  *free = (size_t)avail * (size_t)page;
  return ACL_SUCCESS;
}

/* --- the SoC */

void acl_set_soc(const char *soc) {
  if (soc && *soc) snprintf(g.soc, sizeof g.soc, "%s", soc);
}

const char *aclrtGetSocName(void) {
  if (acl_enter("aclrtGetSocName")) return NULL;
  const char *soc = g.soc;
  acl_leave();
  return soc;
}

/* --- init, version */

aclError aclInit(const char *configPath) {
  acl_init_config cfg = {0};
  if (configPath && *configPath) {
    struct stat st;
    FILE *f = fopen(configPath, "rb");
    int ok = f && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
    int err = errno;
    if (f) fclose(f);
    if (!ok)
      return acl_fail(ACL_ERROR_INVALID_FILE, "aclInit: configPath '%s': %s", configPath,
                      f ? "not a regular file" : strerror(err));
    aclError e = acl_read_config("aclInit", configPath, 0, &cfg);
    if (e) return e;
  }
  pthread_mutex_lock(&g.mu);
  if (g.initialized) {
    pthread_mutex_unlock(&g.mu);
    acl_config_free(&cfg);
    return acl_fail(ACL_ERROR_REPEAT_INITIALIZE, "aclInit: already initialized (aclFinalize first)");
  }
  g.initialized = 1;
  g.default_device = cfg.default_device;
  acl_set_err_msg_process(cfg.err_msg_process);
  acl_dump_init_config(&cfg);
  acl_prof_init_config(&cfg);
  pthread_mutex_unlock(&g.mu);
  acl_config_free(&cfg);
  return ACL_SUCCESS;
}

static void free_context(acl_context *c);

aclError aclFinalize(void) {
  pthread_mutex_lock(&g.mu);
  if (!g.initialized) {
    pthread_mutex_unlock(&g.mu);
    return acl_fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize: not initialized (or finalized already)");
  }
  while (g.streams) {
    stream_ref *r = g.streams;
    g.streams = r->next;
    char msg[1024];                         /* (a callback left unrun does not stop the finalization) */
    acl_stream_free(r->s, msg, sizeof msg); /* runs what is queued: models stay loaded until then */
    free(r);
  }
  while (g.contexts) {
    acl_context *c = g.contexts;
    g.contexts = c->next;
    free_context(c);
  }
  acl_op_finalize(); /* (the streams have run what they held) */
  while (g.models) {
    acl_model *m = g.models;
    acl_remove_model(m);
    acl_model_free(m);
  }
  while (g.allocs) {
    alloc *a = g.allocs;
    g.allocs = a->next;
    free(a->base);
    free(a);
  }
  acl_event_finalize(); /* (no stream is left to run an event op) */
  acl_prof_finalize();  /* (aclInit's profiler: the op summary is written) */
  acl_dump_finalize();
  snprintf(g.soc, sizeof g.soc, "%s", DEFAULT_SOC);
  g.device_refs = 0;
  g.default_device = 0;
  g.initialized = 0;
  acl_set_err_msg_process(0);
  make_current(NULL);
  pthread_mutex_unlock(&g.mu);
  return ACL_SUCCESS;
}

aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion) {
  if (!majorVersion || !minorVersion || !patchVersion)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetVersion: %s is NULL",
                    !majorVersion   ? "majorVersion"
                    : !minorVersion ? "minorVersion"
                                    : "patchVersion");
  *majorVersion = OMRT_VERSION_MAJOR;
  *minorVersion = OMRT_VERSION_MINOR;
  *patchVersion = OMRT_VERSION_PATCH;
  return ACL_SUCCESS;
}

aclError aclrtGetRunMode(aclrtRunMode *runMode) {
  aclError e = acl_enter("aclrtGetRunMode");
  if (e) return e;
  if (!runMode) return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetRunMode: runMode is NULL"));
  *runMode = ACL_HOST;
  return acl_leave_with(ACL_SUCCESS);
}

/* --- device and contexts */

aclError acl_check_device(const char *call, int32_t deviceId) {
  if (deviceId != 0)
    return acl_fail(ACL_ERROR_RT_INVALID_DEVICEID, "%s: deviceId %d: the software NPU is device 0 (1 device)",
                    call, (int)deviceId);
  return ACL_SUCCESS;
}

static acl_context *new_context(int is_default) {
  acl_context *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->serial = ++g.serial;
  c->is_default = is_default;
  c->next = g.contexts;
  g.contexts = c;
  return c;
}

/* The context's streams are run dry and freed (default stream included). */
static void free_context(acl_context *c) {
  char msg[1024]; /* (a callback left unrun does not stop the destruction) */
  for (stream_ref **p = &g.streams; *p;) {
    stream_ref *r = *p;
    if (acl_stream_context(r->s) != c) {
      p = &r->next;
      continue;
    }
    *p = r->next;
    acl_stream_free(r->s, msg, sizeof msg);
    free(r);
  }
  acl_stream_free(c->default_stream, msg, sizeof msg);
  free(c);
}

static void unlink_context(acl_context *c) {
  for (acl_context **p = &g.contexts; *p; p = &(*p)->next)
    if (*p == c) {
      *p = c->next;
      return;
    }
}

static acl_context *default_context(void) {
  for (acl_context *c = g.contexts; c; c = c->next)
    if (c->is_default) return c;
  return NULL;
}

aclError aclrtSetDevice(int32_t deviceId) {
  aclError e = acl_enter("aclrtSetDevice");
  if (e || (e = acl_check_device("aclrtSetDevice", deviceId))) return e ? acl_leave_with(e) : e;
  acl_context *c = default_context();
  if (!c && !(c = new_context(1)))
    return acl_leave_with(acl_fail(ACL_ERROR_BAD_ALLOC, "aclrtSetDevice: out of memory"));
  g.device_refs++;
  make_current(c);
  return acl_leave_with(ACL_SUCCESS);
}

/* aclrtResetDevice drops one aclrtSetDevice; force: all of them. */
static aclError reset_device(const char *call, int32_t deviceId, int force) {
  aclError e = acl_enter(call);
  if (e) return e;
  if ((e = acl_check_device(call, deviceId))) return acl_leave_with(e);
  acl_context *c = default_context();
  if (g.device_refs == 0 && !(g.default_device && c)) /* (aclInit's "defaultDevice" sets it too) */
    return acl_leave_with(acl_fail(ACL_ERROR_RT_INVALID_DEVICEID,
                                   "%s: device %d was not set (aclrtSetDevice)", call, (int)deviceId));
  g.device_refs = force || g.device_refs == 0 ? 0 : g.device_refs - 1;
  if (g.device_refs == 0 && c) { /* the default context and its streams go */
    unlink_context(c);
    free_context(c);
  }
  return acl_leave_with(ACL_SUCCESS);
}

aclError aclrtResetDevice(int32_t deviceId) { return reset_device("aclrtResetDevice", deviceId, 0); }

aclError aclrtResetDeviceForce(int32_t deviceId) {
  return reset_device("aclrtResetDeviceForce", deviceId, 1);
}

aclError aclrtGetDevice(int32_t *deviceId) {
  aclError e = acl_enter("aclrtGetDevice");
  if (e) return e;
  if (!deviceId) return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice: deviceId is NULL"));
  if (!acl_current())
    return acl_leave_with(
        acl_fail(ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetDevice: no current context (no device set)"));
  *deviceId = 0;
  return acl_leave_with(ACL_SUCCESS);
}

aclError aclrtGetDeviceCount(uint32_t *count) {
  aclError e = acl_enter("aclrtGetDeviceCount");
  if (e) return e;
  if (!count) return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount: count is NULL"));
  *count = 1;
  return acl_leave_with(ACL_SUCCESS);
}

aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId) {
  aclError e = acl_enter("aclrtCreateContext");
  if (e) return e;
  if (!context)
    return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateContext: context is NULL"));
  if ((e = acl_check_device("aclrtCreateContext", deviceId))) return acl_leave_with(e);
  acl_context *c = new_context(0);
  if (!c) return acl_leave_with(acl_fail(ACL_ERROR_BAD_ALLOC, "aclrtCreateContext: out of memory"));
  make_current(c);
  *context = c;
  return acl_leave_with(ACL_SUCCESS);
}

aclError aclrtDestroyContext(aclrtContext context) {
  aclError e = acl_enter("aclrtDestroyContext");
  if (e) return e;
  acl_context *c = find_context(context);
  if (!c)
    return acl_leave_with(
        acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyContext: context %p is not a live context", context));
  if (c->is_default)
    return acl_leave_with(
        acl_fail(ACL_ERROR_INVALID_PARAM,
                 "aclrtDestroyContext: context %p is the device's default context (released "
                 "by aclrtResetDevice)",
                 context));
  unlink_context(c);
  free_context(c);
  return acl_leave_with(ACL_SUCCESS);
}

aclError aclrtSetCurrentContext(aclrtContext context) {
  aclError e = acl_enter("aclrtSetCurrentContext");
  if (e) return e;
  acl_context *c = find_context(context);
  if (!c)
    return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM,
                                   "aclrtSetCurrentContext: context %p is not a live context", context));
  make_current(c);
  return acl_leave_with(ACL_SUCCESS);
}

aclError aclrtGetCurrentContext(aclrtContext *context) {
  aclError e = acl_enter("aclrtGetCurrentContext");
  if (e) return e;
  if (!context)
    return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetCurrentContext: context is NULL"));
  acl_context *c = acl_current();
  if (!c)
    return acl_leave_with(acl_fail(ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetCurrentContext: no current context"));
  *context = c;
  return acl_leave_with(ACL_SUCCESS);
}

/* --- streams */

static stream_ref *find_stream(const void *handle) {
  for (stream_ref *r = g.streams; r; r = r->next)
    if (r->s == handle) return r;
  return NULL;
}

aclError acl_resolve_stream(const char *call, aclrtStream stream, acl_stream **out) {
  acl_context *c = acl_current();
  if (!c) return acl_fail(ACL_ERROR_RT_CONTEXT_NULL, "%s: no current context", call);
  if (!stream) {
    if (!c->default_stream && !(c->default_stream = acl_stream_new(c)))
      return acl_fail(ACL_ERROR_RT_FAILURE, "%s: cannot start the default stream", call);
    *out = c->default_stream;
    return ACL_SUCCESS;
  }
  stream_ref *r = find_stream(stream);
  if (!r) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: stream %p is not a live stream", call, stream);
  if (acl_stream_context(r->s) != c)
    return acl_fail(ACL_ERROR_RT_STREAM_CONTEXT,
                    "%s: stream %p belongs to another context than the current one", call, stream);
  *out = r->s;
  return ACL_SUCCESS;
}

aclError acl_create_stream(const char *call, aclrtStream *stream, uint32_t priority) {
  aclError e = acl_enter(call);
  if (e) return e;
  if (!stream) return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "%s: stream is NULL", call));
  acl_context *c = acl_current();
  if (!c) return acl_leave_with(acl_fail(ACL_ERROR_RT_CONTEXT_NULL, "%s: no current context", call));
  stream_ref *r = malloc(sizeof *r);
  acl_stream *s = r ? acl_stream_new(c) : NULL;
  if (!s) {
    free(r);
    return acl_leave_with(acl_fail(ACL_ERROR_RT_FAILURE, "%s: cannot start a stream", call));
  }
  acl_stream_set_priority(s, priority);
  *r = (stream_ref){g.streams, s};
  g.streams = r;
  *stream = s;
  return acl_leave_with(ACL_SUCCESS);
}

aclError aclrtCreateStream(aclrtStream *stream) { return acl_create_stream("aclrtCreateStream", stream, 0); }

/* (a stream here holds no task that cannot finish: the forced destroy
 * also runs what is queued) */
static aclError destroy_stream(const char *call, aclrtStream stream) {
  aclError e = acl_enter(call);
  if (e) return e;
  for (stream_ref **p = &g.streams; *p; p = &(*p)->next) {
    stream_ref *r = *p;
    if (r->s != stream) continue;
    *p = r->next;
    char msg[1024];
    e = acl_stream_free(r->s, msg, sizeof msg);
    free(r);
    if (e) e = acl_fail(e, "%s: stream %p (destroyed): %s", call, stream, msg);
    return acl_leave_with(e);
  }
  return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM, "%s: stream %p is not a live stream%s", call,
                                 stream, stream ? "" : " (the default stream cannot be destroyed)"));
}

aclError aclrtDestroyStream(aclrtStream stream) { return destroy_stream("aclrtDestroyStream", stream); }

aclError aclrtDestroyStreamForce(aclrtStream stream) {
  return destroy_stream("aclrtDestroyStreamForce", stream);
}

static aclError synchronize(const char *call, aclrtStream stream, int32_t timeout) {
  aclError e = acl_enter(call);
  if (e) return e;
  acl_stream *s = NULL;
  if (timeout < -1 || timeout == 0)
    return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM,
                                   "%s: timeout %d: -1 waits forever, > 0 that many ms", call, (int)timeout));
  if ((e = acl_resolve_stream(call, stream, &s))) return acl_leave_with(e);
  acl_leave(); /* (destroying a stream while another thread waits for it is the caller's race) */
  char msg[1024];
  e = acl_stream_wait(s, msg, sizeof msg, timeout);
  return e ? acl_fail(e, "%s: stream %p: %s", call, stream, msg) : ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
  return synchronize("aclrtSynchronizeStream", stream, -1);
}

aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout) {
  return synchronize("aclrtSynchronizeStreamWithTimeout", stream, timeout);
}

/* Waits for s, within what is left of timeout ms (-1: no limit) since t0. */
static aclError wait_within(acl_stream *s, const struct timespec *t0, int32_t timeout, char *msg, size_t n) {
  int32_t left = -1;
  if (timeout > 0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    int64_t spent = (int64_t)(t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
    left = spent >= timeout ? 1 : (int32_t)(timeout - spent);
  }
  return acl_stream_wait(s, msg, n, left);
}

/* Every stream waited for, all within timeout ms (-1: no limit). */
static aclError synchronize_device(const char *call, int32_t timeout) {
  aclError e = acl_enter(call);
  if (e) return e;
  if (timeout < -1 || timeout == 0)
    return acl_leave_with(acl_fail(ACL_ERROR_INVALID_PARAM,
                                   "%s: timeout %d: -1 waits forever, > 0 that many ms", call, (int)timeout));
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  char msg[1024];
  aclError first = ACL_SUCCESS;
  for (stream_ref *r = g.streams; r && first != ACL_ERROR_RT_STREAM_SYNC_TIMEOUT; r = r->next)
    if ((e = wait_within(r->s, &t0, timeout, msg, sizeof msg)) && !first) first = e;
  for (acl_context *c = g.contexts; c && first != ACL_ERROR_RT_STREAM_SYNC_TIMEOUT; c = c->next)
    if (c->default_stream && (e = wait_within(c->default_stream, &t0, timeout, msg, sizeof msg)) && !first)
      first = e;
  if (first == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)
    return acl_leave_with(
        acl_fail(first, "%s: the device's work did not finish within %d ms", call, (int)timeout));
  return acl_leave_with(first ? acl_fail(first, "%s: %s", call, msg) : ACL_SUCCESS);
}

aclError aclrtSynchronizeDevice(void) { return synchronize_device("aclrtSynchronizeDevice", -1); }

aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout) {
  return synchronize_device("aclrtSynchronizeDeviceWithTimeout", timeout);
}
