/* acl_dump.c - AscendCL's model dump (acl_mdl.h: aclmdlInitDump,
 * aclmdlSetDump, aclmdlFinalizeDump; acl_dump.h: acldumpRegCallback): the
 * tensors each operator of a model reads and writes, written out as the
 * model runs, for accuracy comparison.
 *
 * Configuration: aclmdlInitDump, then aclmdlSetDump(file) (the "dump"
 * section of acl_init_config.c; a later SetDump replaces the earlier), then
 * models loaded, run, and aclmdlFinalizeDump; or aclInit's own "dump"
 * section (until aclFinalize). A model dumps when it was loaded while a
 * configuration was active and its dump_list selects it (an entry whose
 * "model_name" is the model's file name without extension, or the om's
 * model name; an entry without one selects every model); its executions
 * dump until the configuration ends (aclmdlFinalizeDump, aclFinalize).
 * Wrong order: SetDump or FinalizeDump without InitDump is
 * ACL_ERROR_DUMP_NOT_RUN, a second InitDump ACL_ERROR_DUMP_ALREADY_RUN.
 * With a callback (acldumpRegCallback, flag 0) the files are not written:
 * their bytes go to the callback in chunks of at most 1 MiB, each with the
 * file's path, its offset in the file and isLastChunk; an InitDump with a
 * callback and no SetDump dumps the outputs of every model loaded after,
 * while a callback is registered (paths {time}/0/..., nothing on disk).
 *
 * Layout: {dump_path}/{time}/0/{model_name}/{model_id}/{iteration}/ with
 * time the configuration's local time (YYYYMMDDhhmmss), 0 the device,
 * iteration the model's dumped executions counted from 0; one file per
 * task, named {op_type}.{op_name}.{task_id}.{stream_id}.{timestamp}: the
 * task kind, the task's name (characters outside [A-Za-z0-9_-] as '_'),
 * its index, stream 0, microseconds since the epoch. The layer names of
 * "layer" match a task by its name, the ONNX nodes it stands for, or the
 * ONNX or om names of the tensors it writes (as omrun --dump).
 *
 * A file: an 8-byte little-endian length L, then L bytes of a DumpData
 * protobuf message (toolkit.dumpdata, proto3), then the tensors' bytes:
 * the inputs' in order, then the outputs'. DumpData holds version "2.0",
 * dump_time (us since the epoch), op_name (the task's name), and per
 * tensor (input = 4, output = 3) its data_type, format, shape (the stored
 * dims: [N, C1, H, W, C0] for NC1HWC0), size (bytes that follow), and
 * original_shape (the ONNX dims); an output's original_op carries the
 * ONNX tensor it holds and its output index. The data fields stay empty
 * (the bytes follow the message). Inputs are taken before the task runs
 * (dump_mode "input", "all"), outputs after it ("output", "all"); a
 * tensor written through a strided view (an attention's result) is
 * written as float32 in C order (format ND).
 *
 * Cost: none unless a loaded model dumps (acl_trace.c sets libomrt's task
 * hooks for that model's runs only).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "acl/acl_dump.h"
#include "acl/acl_internal.h"

enum { CHUNK_BYTES = 1 << 20, PATH_BYTES = 4096 };

static struct {
  pthread_mutex_t mu;
  int inited;     /* aclmdlInitDump (or aclInit's dump section) */
  int configured; /* aclmdlSetDump (or aclInit's dump section) */
  acl_dump_config cfg;
  char time[16];   /* the configuration's YYYYMMDDhhmmss */
  uint64_t serial; /* the configuration models dump under (changed when it ends) */
  int32_t (*cb)(const acldumpChunk *, int32_t);
} g = {.mu = PTHREAD_MUTEX_INITIALIZER, .serial = 1};

/* What a model loaded under a configuration dumps. */
struct acl_dump_model {
  uint64_t serial;
  int mode;      /* ACL_DUMP_* */
  int cb_only;   /* selected by a callback without a configuration: no files without it */
  char **layers; /* [nlayers], owned; none: every task */
  int nlayers;
  char *dir; /* {dump_path}/{time}/0/{model_name}/{model_id} (owned) */
  uint64_t iteration;
  /* The run under way (one at a time: the model's run mutex). */
  int32_t (*cb)(const acldumpChunk *, int32_t);
  char run_dir[PATH_BYTES];
  int dir_made;
  struct pb {
    uint8_t *p;
    size_t n, cap;
  } meta, in_data, out_data, msg, sub, sub2; /* the task's DumpData fields, its tensors' bytes, scratch */
  int task_wanted;
  acldumpChunk *chunk; /* with a callback: CHUNK_BYTES of dataBuf */
};

/* --- protobuf wire format (varints and length-delimited fields) */

typedef struct pb pb;

static int pb_put(pb *b, const void *src, size_t n) {
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + n)
      cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) return 1;
    b->p = p, b->cap = cap;
  }
  if (n && src) memcpy(b->p + b->n, src, n);
  b->n += n;
  return 0;
}

static int pb_varint(pb *b, uint64_t v) {
  uint8_t s[10];
  int n = 0;
  do {
    s[n++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
    v >>= 7;
  } while (v);
  return pb_put(b, s, (size_t)n);
}

static int pb_uint(pb *b, int field, uint64_t v) {
  return pb_varint(b, (uint64_t)field << 3) || pb_varint(b, v);
}

static int pb_bytes(pb *b, int field, const void *p, size_t n) {
  return pb_varint(b, (uint64_t)field << 3 | 2) || pb_varint(b, n) || pb_put(b, p, n);
}

static int pb_shape(pb *b, int field, pb *scratch, int rank, const int64_t *dims) {
  scratch->n = 0;
  for (int r = 0; r < rank; r++)
    if (pb_uint(scratch, 1, (uint64_t)dims[r])) return 1;
  return pb_bytes(b, field, scratch->p, scratch->n);
}

static void pb_free(pb *b) { free(b->p), *b = (pb){0}; }

/* --- configuration */

static aclError enter(const char *call) { return acl_enter_module(call, &g.mu); }

static aclError leave(aclError e) {
  pthread_mutex_unlock(&g.mu);
  return e;
}

/* Ends the configuration (under g.mu): models loaded under it stop dumping. */
static void end_config(void) {
  acl_init_config c = {.dump = g.cfg};
  acl_config_free(&c);
  g.cfg = (acl_dump_config){0};
  g.configured = 0;
  g.serial++;
}

static void stamp_time(void) {
  time_t now = time(NULL);
  struct tm tm;
  localtime_r(&now, &tm);
  strftime(g.time, sizeof g.time, "%Y%m%d%H%M%S", &tm);
}

static void take_config(acl_dump_config *cfg) {
  end_config();
  g.cfg = *cfg;
  *cfg = (acl_dump_config){0};
  g.configured = 1;
  stamp_time();
}

aclError aclmdlInitDump(void) {
  aclError e = enter("aclmdlInitDump");
  if (e) return e;
  if (g.inited)
    return leave(acl_fail(ACL_ERROR_DUMP_ALREADY_RUN, "aclmdlInitDump: the dump is initialized already (%s)",
                          "aclmdlFinalizeDump ends it"));
  g.inited = 1;
  end_config();
  stamp_time(); /* (a callback without aclmdlSetDump names its files from it) */
  return leave(ACL_SUCCESS);
}

aclError aclmdlSetDump(const char *dumpCfgPath) {
  if (!dumpCfgPath) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclmdlSetDump: dumpCfgPath is NULL");
  aclError e = enter("aclmdlSetDump");
  if (e) return e;
  if (!g.inited)
    return leave(acl_fail(ACL_ERROR_DUMP_NOT_RUN, "aclmdlSetDump: aclmdlInitDump has not been called"));
  acl_init_config cfg;
  if ((e = acl_read_config("aclmdlSetDump", dumpCfgPath, 1, &cfg))) return leave(e);
  take_config(&cfg.dump);
  acl_config_free(&cfg);
  return leave(ACL_SUCCESS);
}

aclError aclmdlFinalizeDump(void) {
  aclError e = enter("aclmdlFinalizeDump");
  if (e) return e;
  if (!g.inited)
    return leave(acl_fail(ACL_ERROR_DUMP_NOT_RUN, "aclmdlFinalizeDump: aclmdlInitDump has not been called"));
  g.inited = 0;
  end_config();
  return leave(ACL_SUCCESS);
}

aclError acldumpRegCallback(int32_t (*const messageCallback)(const acldumpChunk *, int32_t), int32_t flag) {
  if (!messageCallback)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "acldumpRegCallback: messageCallback is NULL");
  if (flag != 0)
    return acl_fail(ACL_ERROR_INVALID_PARAM,
                    "acldumpRegCallback: flag %d: only 0 (the dump goes to the callback, not to files)",
                    (int)flag);
  aclError e = enter("acldumpRegCallback");
  if (e) return e;
  g.cb = messageCallback;
  return leave(ACL_SUCCESS);
}

void acldumpUnregCallback(void) {
  pthread_mutex_lock(&g.mu);
  g.cb = NULL;
  pthread_mutex_unlock(&g.mu);
}

void acl_dump_init_config(acl_init_config *cfg) {
  if (!cfg->dump.on) return;
  pthread_mutex_lock(&g.mu);
  g.inited = 1;
  take_config(&cfg->dump);
  pthread_mutex_unlock(&g.mu);
}

void acl_dump_finalize(void) {
  pthread_mutex_lock(&g.mu);
  g.inited = 0;
  g.cb = NULL;
  end_config();
  pthread_mutex_unlock(&g.mu);
}

/* --- models */

const char *acl_model_dump_name(const acl_model *am) {
  return am->file_name ? am->file_name : omrt_model_name(am->m);
}

static void file_safe(const char *s, char *out, size_t n) {
  size_t k = 0;
  for (; s && *s && k + 1 < n; s++)
    out[k++] = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                       *s == '-' || *s == '_'
                   ? *s
                   : '_';
  out[k] = '\0';
}

aclError acl_dump_attach(acl_model *am, const char *path) {
  if (path) { /* the file name without directory and extension */
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t n = dot && dot > base ? (size_t)(dot - base) : strlen(base);
    if (!(am->file_name = strndup(base, n))) return acl_fail(ACL_ERROR_BAD_ALLOC, "out of memory");
  }
  pthread_mutex_lock(&g.mu);
  const acl_dump_entry *pick = NULL;
  int every = 0; /* InitDump and a callback without SetDump */
  if (g.inited && g.configured && g.cfg.on) {
    const char *om_name = omrt_model_name(am->m);
    for (int i = 0; i < g.cfg.nlist && !pick; i++) {
      const acl_dump_entry *e = &g.cfg.list[i];
      if (e->model && ((am->file_name && !strcmp(e->model, am->file_name)) || !strcmp(e->model, om_name)))
        pick = e;
    }
    for (int i = 0; i < g.cfg.nlist && !pick; i++)
      if (!g.cfg.list[i].model) pick = &g.cfg.list[i];
  } else if (g.inited && !g.configured && g.cb) {
    every = 1;
  }
  aclError e = ACL_SUCCESS;
  if (pick || every) {
    acl_dump_model *d = calloc(1, sizeof *d);
    char name[256], dir[PATH_BYTES];
    file_safe(acl_model_dump_name(am), name, sizeof name);
    snprintf(dir, sizeof dir, "%s%s%s/0/%s/%u", every ? "" : g.cfg.path, every ? "" : "/", g.time, name,
             am->id);
    if (d) {
      d->serial = g.serial;
      d->mode = every ? ACL_DUMP_OUTPUT : g.cfg.mode;
      d->cb_only = every;
      d->dir = strdup(dir);
      if (pick && pick->nlayers && (d->layers = calloc((size_t)pick->nlayers, sizeof *d->layers)))
        for (int k = 0; k < pick->nlayers; k++)
          if ((d->layers[d->nlayers] = strdup(pick->layers[k]))) d->nlayers++;
    }
    if (!d || !d->dir || (pick && pick->nlayers && d->nlayers != pick->nlayers)) {
      acl_dump_model_free(d);
      e = acl_fail(ACL_ERROR_BAD_ALLOC, "out of memory for the dump of model %u", am->id);
    } else {
      am->dump = d;
    }
  }
  pthread_mutex_unlock(&g.mu);
  return e;
}

void acl_dump_model_free(acl_dump_model *d) {
  if (!d) return;
  for (int k = 0; k < d->nlayers; k++)
    free(d->layers[k]);
  free(d->layers);
  free(d->dir);
  pb_free(&d->meta), pb_free(&d->in_data), pb_free(&d->out_data), pb_free(&d->msg), pb_free(&d->sub),
      pb_free(&d->sub2);
  free(d->chunk);
  free(d);
}

/* --- runs */

acl_dump_model *acl_dump_run_begin(acl_model *m) {
  acl_dump_model *d = m->dump;
  pthread_mutex_lock(&g.mu);
  d->cb = g.cb;
  int on = g.inited && d->serial == g.serial && (d->cb || !d->cb_only);
  pthread_mutex_unlock(&g.mu);
  if (!on) return NULL;
  if (d->cb && !d->chunk && !(d->chunk = malloc(sizeof *d->chunk + CHUNK_BYTES))) return NULL;
  snprintf(d->run_dir, sizeof d->run_dir, "%s/%llu", d->dir, (unsigned long long)d->iteration);
  d->dir_made = 0;
  return d;
}

void acl_dump_run_end(acl_dump_model *d) { d->iteration++; }

static int listed(const acl_dump_model *d, const char *name) {
  for (int k = 0; name && k < d->nlayers; k++)
    if (!strcmp(d->layers[k], name)) return 1;
  return 0;
}

static int wanted(const acl_dump_model *d, const omrt_model *m, const omrt_task_info *info) {
  if (!d->nlayers || listed(d, info->name)) return 1;
  for (int j = 0; j < info->nnodes; j++)
    if (listed(d, omrt_model_task_node(m, info->index, j))) return 1;
  for (int k = 0; k < info->noutputs; k++)
    if (listed(d, info->outputs[k].onnx_name) || listed(d, info->outputs[k].name)) return 1;
  return 0;
}

/* DumpData's OutputDataType and OutputFormat for libomrt's dtype and layout. */
static int dump_dtype(int dtype) {
  switch (dtype) {
  case OMRT_FLOAT32: return 1;
  case OMRT_FLOAT16: return 2;
  case OMRT_INT8: return 3;
  case OMRT_UINT8: return 4;
  case OMRT_INT32: return 7;
  case OMRT_INT64: return 8;
  case OMRT_BOOL: return 11;
  default: return 0; /* DT_UNDEFINED: bfloat16, float8 and the sub-byte types have no number here */
  }
}

static int dump_format(int layout) {
  switch (layout) {
  case OMRT_LAYOUT_ND: return 2;
  case OMRT_LAYOUT_NC1HWC0: return 3;
  case OMRT_LAYOUT_FRACTAL_NZ: return 29;
  case OMRT_LAYOUT_NDC1HWC0: return 32;
  default: return 4; /* FRACTAL_Z (also FRACTAL_Z_G and FRACTAL_Z_3D: packed weights) */
  }
}

/* The stored dims of t: [N, C1, H, W, C0] for NC1HWC0 (and [N, D, C1, H, W,
 * C0] for NDC1HWC0), dims for ND, the flat element count for packed
 * weights. Returns the rank. */
static int stored_dims(const omrt_task_tensor *t, size_t elem, int64_t *out) {
  int five = t->layout == OMRT_LAYOUT_NC1HWC0 && t->rank == 4,
      six = t->layout == OMRT_LAYOUT_NDC1HWC0 && t->rank == 5;
  if (t->layout == OMRT_LAYOUT_ND) {
    memcpy(out, t->dims, (size_t)t->rank * sizeof *out);
    return t->rank;
  }
  if ((five || six) && elem) {
    int64_t rest = t->dims[0];
    for (int r = 2; r < t->rank; r++)
      rest *= t->dims[r];
    int64_t c = t->dims[1], per = rest ? (int64_t)(t->bytes / elem) / rest : 0; /* C1 * C0 */
    static const int64_t c0s[] = {16, 32, 8, 4};
    for (int i = 0; i < 4; i++)
      if (per == (c + c0s[i] - 1) / c0s[i] * c0s[i]) {
        int n = 0;
        out[n++] = t->dims[0];
        if (six) out[n++] = t->dims[2];
        out[n++] = per / c0s[i];
        for (int r = six ? 3 : 2; r < t->rank; r++)
          out[n++] = t->dims[r];
        out[n++] = c0s[i];
        return n;
      }
  }
  out[0] = elem ? (int64_t)(t->bytes / elem) : (int64_t)t->bytes;
  return 1;
}

/* Adds tensor t to the task's DumpData (field 4: input, 3: output #k) and
 * its bytes to data. 0, or 1 when out of memory. */
static int add_tensor(acl_dump_model *d, const omrt_task_tensor *t, int output, int k, pb *data) {
  pb *s = &d->sub, *s2 = &d->sub2;
  s->n = 0;
  int strided = t->rank > 0 && t->strides[t->rank - 1] != 0;
  size_t elem = aclDataTypeSize(acl_data_type(t->dtype)), bytes = t->bytes;
  int64_t dims[OMRT_MAX_RANK + 2];
  int rank, dtype = dump_dtype(t->dtype), format = dump_format(t->layout);
  if (strided) { /* a view: float32 in C order */
    size_t count = 1;
    for (int r = 0; r < t->rank; r++)
      count *= (size_t)t->dims[r];
    float *f = malloc(count * sizeof *f);
    int bad = !f || omrt_task_tensor_to_f32(t, f, count) != OMRT_OK || pb_put(data, f, count * sizeof *f);
    free(f);
    if (bad) return 1;
    bytes = count * sizeof *f, dtype = 1, format = 2;
    memcpy(dims, t->dims, (size_t)t->rank * sizeof *dims);
    rank = t->rank;
  } else {
    if (pb_put(data, t->data, t->bytes)) return 1;
    rank = stored_dims(t, elem, dims);
  }
  if (pb_uint(s, 1, (uint64_t)dtype) || pb_uint(s, 2, (uint64_t)format) || pb_shape(s, 3, s2, rank, dims))
    return 1;
  if (output) {
    const char *onnx = t->onnx_name ? t->onnx_name : t->name;
    pb o = {0};
    int bad = pb_bytes(&o, 1, onnx, strlen(onnx)) || pb_uint(&o, 2, (uint64_t)k) ||
              pb_uint(&o, 3, (uint64_t)dump_dtype(t->dtype)) ||
              pb_uint(&o, 4, (uint64_t)dump_format(t->layout)) || pb_bytes(s, 4, o.p, o.n) ||
              pb_uint(s, 6, bytes) || pb_shape(s, 7, s2, t->rank, t->dims);
    pb_free(&o);
    if (bad) return 1;
  } else if (pb_uint(s, 5, bytes) || pb_shape(s, 6, s2, t->rank, t->dims)) {
    return 1;
  }
  return pb_bytes(&d->meta, output ? 3 : 4, s->p, s->n);
}

static int make_dirs(char *path) {
  for (char *p = path + 1;; p++) {
    if (*p != '/' && *p) continue;
    char c = *p;
    *p = '\0';
    int bad = mkdir(path, 0755) != 0 && errno != EEXIST;
    *p = c;
    if (bad) return 1;
    if (!c) return 0;
  }
}

int acl_dump_task_start(acl_dump_model *d, omrt_context *ctx, const omrt_model *m, const omrt_task_info *info,
                        char *msg, size_t n) {
  d->meta.n = d->in_data.n = d->out_data.n = 0;
  d->task_wanted = wanted(d, m, info);
  if (!d->task_wanted || !(d->mode & ACL_DUMP_INPUT)) return 0;
  omrt_task_tensor t;
  for (int k = 0; omrt_context_task_input(ctx, k, &t) == OMRT_OK; k++)
    if (add_tensor(d, &t, 0, k, &d->in_data))
      return snprintf(msg, n, "dump: out of memory for task %d '%s'", info->index, info->name), 1;
  return 0;
}

/* Hands `len` bytes at p, at `offset` of file `path`, to the callback. */
static void to_callback(acl_dump_model *d, const char *path, const uint8_t *p, size_t len, size_t *offset,
                        int last) {
  acldumpChunk *c = d->chunk;
  while (len || last) {
    size_t take = len < CHUNK_BYTES ? len : CHUNK_BYTES;
    snprintf(c->fileName, sizeof c->fileName, "%s", path);
    c->bufLen = (uint32_t)take;
    c->isLastChunk = last && take == len;
    c->offset = (int64_t)*offset;
    c->flag = 0;
    if (take) memcpy(c->dataBuf, p, take);
    d->cb(c, (int32_t)(sizeof *c + take));
    p += take, len -= take, *offset += take;
    if (c->isLastChunk) return;
  }
}

int acl_dump_task_end(acl_dump_model *d, const omrt_task_info *info, char *msg, size_t n) {
  if (!d->task_wanted) return 0;
  if (d->mode & ACL_DUMP_OUTPUT)
    for (int k = 0; k < info->noutputs; k++)
      if (add_tensor(d, &info->outputs[k], 1, k, &d->out_data))
        return snprintf(msg, n, "dump: out of memory for task %d '%s'", info->index, info->name), 1;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t us = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
  pb *msgb = &d->msg;
  msgb->n = 0;
  if (pb_bytes(msgb, 1, "2.0", 3) || pb_uint(msgb, 2, us) || pb_put(msgb, d->meta.p, d->meta.n) ||
      pb_bytes(msgb, 6, info->name, strlen(info->name)))
    return snprintf(msg, n, "dump: out of memory for task %d '%s'", info->index, info->name), 1;
  char kind[64], name[256], path[PATH_BYTES + 512];
  file_safe(info->kind, kind, sizeof kind);
  file_safe(info->name, name, sizeof name);
  snprintf(path, sizeof path, "%s/%s.%s.%d.0.%llu", d->run_dir, kind, name, info->index,
           (unsigned long long)us);
  uint8_t head[8];
  for (int i = 0; i < 8; i++)
    head[i] = (uint8_t)((uint64_t)msgb->n >> (8 * i));
  if (d->cb) {
    size_t at = 0;
    to_callback(d, path, head, 8, &at, 0);
    to_callback(d, path, msgb->p, msgb->n, &at, 0);
    to_callback(d, path, d->in_data.p, d->in_data.n, &at, 0);
    to_callback(d, path, d->out_data.p, d->out_data.n, &at, 1);
    return 0;
  }
  if (!d->dir_made) {
    if (make_dirs(d->run_dir))
      return snprintf(msg, n, "dump: cannot create '%s': %s", d->run_dir, strerror(errno)), 1;
    d->dir_made = 1;
  }
  FILE *f = fopen(path, "wb");
  if (!f) return snprintf(msg, n, "dump: cannot create '%s': %s", path, strerror(errno)), 1;
  fwrite(head, 1, 8, f);
  fwrite(msgb->p, 1, msgb->n, f);
  if (d->in_data.n) fwrite(d->in_data.p, 1, d->in_data.n, f);
  if (d->out_data.n) fwrite(d->out_data.p, 1, d->out_data.n, f);
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) return snprintf(msg, n, "dump: cannot write '%s': %s", path, strerror(errno)), 1;
  return 0;
}
