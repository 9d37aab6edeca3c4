/* acl_prof.c - AscendCL's profiling (acl_prof.h): per-task timing of model
 * executions, written as an op summary, or sent per execution to the
 * application's pipe (the subscription calls).
 *
 * Op summary: aclprofInit(dir) -> aclprofCreateConfig -> aclprofStart ->
 * executions -> aclprofStop -> aclprofFinalize (or aclInit's "profiler"
 * section switched on: from aclInit to aclFinalize, into its "output").
 * With ACL_PROF_TASK_TIME in the configuration's data types, every task of
 * every model execution between Start and Stop is one row; Stop writes
 * them to DIR/op_summary_{pid}_{n}.csv (n: the Stop's number, from 1), a
 * CSV file whose columns follow msprof's op summary where they apply:
 *   Device_id, Model Name (acl_model_dump_name), Model ID, Iteration ID
 *   (the model's profiled executions, from 1), Task ID (the task's index
 *   in the om), Stream ID (0), Op Name (the task's name), OP Type (its
 *   kind), Task Type (AI_CORE: every task runs on the simulated AI cores),
 *   Task Start Time(us) (since the epoch, CLOCK_REALTIME), Task
 *   Duration(us), Task Wait Time(us) (since the previous task of the run
 *   ended; 0 for the first), Output Shapes, Output Data Types, Output
 *   Formats (the tensors the task writes as stored, ';' between them).
 * Wrong order: Start, Stop or Finalize before Init is
 * ACL_ERROR_PROF_NOT_RUN, as Stop before Start; a second Init or Start
 * ACL_ERROR_PROF_ALREADY_RUN; Init while aclInit's profiler is on
 * ACL_ERROR_PROF_API_CONFLICT.
 *
 * Subscription: aclprofModelSubscribe(model, aclprofCreateSubscribeConfig(
 * 1, ..., &fd)) sends, after each execution of that model, one fixed-size
 * record per task to the pipe fd (one write of the run's records;
 * aclprofGetOpDescSize bytes each), read back by aclprofGetOpNum, ...Type,
 * ...Name, ...Start, ...End (ns since the epoch), ...Duration (ns) and
 * ...ModelId. aclprofModelUnSubscribe waits for an execution under way,
 * then closes fd, as documented. A pipe nobody reads any more drops the
 * records (EPIPE; SIGPIPE is not raised in the application).
 *
 * The timing comes from libomrt's task hooks (acl_trace.c): a task's start
 * is taken once its tensors are resolved, its end once it finished (its
 * workers past the barrier). Cost: none while nothing profiles (one atomic
 * read per execution).
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl_internal.h"
#include "acl/acl_prof.h"

enum { TYPE_BYTES = 64, NAME_BYTES = 256, MAX_DEVICES = 64 };

struct aclprofConfig {
  uint32_t ndevices;
  aclprofAicoreMetrics metrics;
  uint64_t types; /* ACL_PROF_* bits */
};

struct aclprofSubscribeConfig {
  int8_t time_info;
  aclprofAicoreMetrics metrics;
  int fd;
};

/* One task of one execution, as the subscription sends it. */
typedef struct op_record {
  uint64_t start_ns, end_ns; /* CLOCK_REALTIME */
  uint32_t model_id, task_id;
  char op_type[TYPE_BYTES]; /* NUL-terminated */
  char op_name[NAME_BYTES]; /* NUL-terminated (truncated past 255 bytes) */
} op_record;

typedef struct subscription {
  struct subscription *next;
  uint32_t model_id;
  int fd, time_info;
} subscription;

typedef struct text {
  char *p;
  size_t n, cap;
} text;

static struct {
  pthread_mutex_t mu;
  int inited;    /* aclprofInit, or aclInit's profiler section */
  int from_json; /* ... the latter */
  char *dir;     /* where summaries go (owned) */
  const aclprofConfig *started;
  aclprofConfig json_config; /* aclInit's: task time */
  text rows;                 /* the CSV rows since Start */
  int stops;
  subscription *subs;
  atomic_int active; /* started or a subscription exists: executions are timed */
} g = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* The state of one profiled execution (acl_trace.c). */
struct acl_prof_run {
  acl_model *m;
  uint64_t iteration;
  int rows, fd; /* rows: the op summary wants them; fd: the subscription's, or -1 */
  uint64_t last_end;
  text csv;
  op_record *recs;
  size_t nrecs, cap;
};

static int put(text *t, const char *s, size_t n) {
  if (t->n + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 1 << 16;
    while (cap < t->n + n + 1)
      cap *= 2;
    char *p = realloc(t->p, cap);
    if (!p) return 1;
    t->p = p, t->cap = cap;
  }
  memcpy(t->p + t->n, s, n);
  t->n += n;
  t->p[t->n] = '\0';
  return 0;
}

static int putf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int putf(text *t, const char *fmt, ...) {
  char s[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(s, sizeof s, fmt, ap);
  va_end(ap);
  return n < 0 || put(t, s, (size_t)n < sizeof s ? (size_t)n : sizeof s - 1);
}

/* A CSV field: quoted when it holds a comma, a quote or a line break. */
static int put_field(text *t, const char *s) {
  if (!strpbrk(s, ",\"\n\r")) return put(t, s, strlen(s));
  if (put(t, "\"", 1)) return 1;
  for (; *s; s++)
    if ((*s == '"' && put(t, "\"", 1)) || put(t, s, 1)) return 1;
  return put(t, "\"", 1);
}

static const char *dtype_name(int d) {
  switch (d) {
  case OMRT_FLOAT32: return "FLOAT";
  case OMRT_FLOAT16: return "FLOAT16";
  case OMRT_BFLOAT16: return "BF16";
  case OMRT_INT8: return "INT8";
  case OMRT_UINT8: return "UINT8";
  case OMRT_INT32: return "INT32";
  case OMRT_INT64: return "INT64";
  case OMRT_BOOL: return "BOOL";
  default: return "OTHER";
  }
}

static const char *layout_name(int l) {
  switch (l) {
  case OMRT_LAYOUT_ND: return "ND";
  case OMRT_LAYOUT_NC1HWC0: return "NC1HWC0";
  case OMRT_LAYOUT_FRACTAL_Z: return "FRACTAL_Z";
  case OMRT_LAYOUT_FRACTAL_Z_G: return "FRACTAL_Z_G";
  case OMRT_LAYOUT_FRACTAL_NZ: return "FRACTAL_NZ";
  case OMRT_LAYOUT_NDC1HWC0: return "NDC1HWC0";
  case OMRT_LAYOUT_FRACTAL_Z_3D: return "FRACTAL_Z_3D";
  default: return "OTHER";
  }
}

static const char csv_header[] =
    "Device_id,Model Name,Model ID,Iteration ID,Task ID,Stream ID,Op Name,OP Type,Task Type,"
    "Task Start Time(us),Task Duration(us),Task Wait Time(us),Output Shapes,Output Data Types,Output "
    "Formats\n";

/* --- the op summary */

static aclError enter(const char *call) { return acl_enter_module(call, &g.mu); }

static aclError leave(aclError e) {
  pthread_mutex_unlock(&g.mu);
  return e;
}

static void update_active(void) { atomic_store(&g.active, g.started != NULL || g.subs != NULL); }

aclError aclprofInit(const char *profilerResultPath, size_t length) {
  const char *call = "aclprofInit";
  if (!profilerResultPath) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: profilerResultPath is NULL", call);
  if (length == 0 || length > 4096 || strnlen(profilerResultPath, length + 1) != length)
    return acl_fail(ACL_ERROR_INVALID_PARAM,
                    "%s: length %zu is not the length of profilerResultPath (1..4096)", call, length);
  aclError e = enter(call);
  if (e) return e;
  if (g.from_json)
    return leave(
        acl_fail(ACL_ERROR_PROF_API_CONFLICT, "%s: aclInit's configuration switched the profiler on", call));
  if (g.inited)
    return leave(acl_fail(ACL_ERROR_PROF_ALREADY_RUN,
                          "%s: profiling is initialized already (aclprofFinalize first)", call));
  struct stat st;
  if (stat(profilerResultPath, &st) != 0 || !S_ISDIR(st.st_mode) ||
      access(profilerResultPath, W_OK | X_OK) != 0)
    return leave(acl_fail(ACL_ERROR_INVALID_FILE,
                          "%s: profilerResultPath '%s': not a writable directory (%s)", call,
                          profilerResultPath, errno ? strerror(errno) : "not a directory"));
  if (!(g.dir = strdup(profilerResultPath)))
    return leave(acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call));
  g.inited = 1;
  return leave(ACL_SUCCESS);
}

aclprofConfig *aclprofCreateConfig(uint32_t *deviceIdList, uint32_t deviceNums,
                                   aclprofAicoreMetrics aicoreMetrics,
                                   const aclprofAicoreEvents *aicoreEvents, uint64_t dataTypeConfig) {
  const char *call = "aclprofCreateConfig";
  (void)aicoreEvents; /* (reserved: NULL in the documented calls) */
  if (acl_enter(call)) return NULL;
  acl_leave();
  if (!deviceIdList || deviceNums == 0 || deviceNums > MAX_DEVICES) {
    acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", call,
             !deviceIdList ? "deviceIdList is NULL" : "deviceNums must be 1 .. 64");
    return NULL;
  }
  for (uint32_t i = 0; i < deviceNums; i++)
    if (deviceIdList[i] != 0) {
      acl_fail(ACL_ERROR_RT_INVALID_DEVICEID, "%s: deviceIdList[%u] %u: the software NPU is device 0", call,
               i, deviceIdList[i]);
      return NULL;
    }
  if (dataTypeConfig & ~(uint64_t)0x7ff) {
    acl_fail(ACL_ERROR_INVALID_PARAM, "%s: dataTypeConfig 0x%llx has bits no ACL_PROF_* names", call,
             (unsigned long long)dataTypeConfig);
    return NULL;
  }
  aclprofConfig *c = malloc(sizeof *c);
  if (!c) {
    acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
    return NULL;
  }
  *c = (aclprofConfig){.ndevices = deviceNums, .metrics = aicoreMetrics, .types = dataTypeConfig};
  return c;
}

aclError aclprofDestroyConfig(const aclprofConfig *profilerConfig) {
  if (!profilerConfig)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "aclprofDestroyConfig: profilerConfig is NULL");
  pthread_mutex_lock(&g.mu);
  int busy = g.started == profilerConfig;
  pthread_mutex_unlock(&g.mu);
  if (busy)
    return acl_fail(ACL_ERROR_INVALID_PARAM,
                    "aclprofDestroyConfig: profilerConfig is started (aclprofStop first)");
  free((void *)profilerConfig);
  return ACL_SUCCESS;
}

aclError aclprofStart(const aclprofConfig *profilerConfig) {
  const char *call = "aclprofStart";
  if (!profilerConfig) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: profilerConfig is NULL", call);
  aclError e = enter(call);
  if (e) return e;
  if (!g.inited) return leave(acl_fail(ACL_ERROR_PROF_NOT_RUN, "%s: aclprofInit has not been called", call));
  if (g.started) return leave(acl_fail(ACL_ERROR_PROF_ALREADY_RUN, "%s: profiling is started already", call));
  g.started = profilerConfig;
  g.rows.n = 0;
  update_active();
  return leave(ACL_SUCCESS);
}

/* Writes the rows since Start and stops (under g.mu). */
static aclError stop(const char *call) {
  char path[4200];
  snprintf(path, sizeof path, "%s/op_summary_%ld_%d.csv", g.dir, (long)getpid(), ++g.stops);
  g.started = NULL;
  update_active();
  FILE *f = fopen(path, "w");
  if (!f)
    return acl_fail(ACL_ERROR_PROFILING_FAILURE, "%s: cannot create '%s': %s", call, path, strerror(errno));
  fputs(csv_header, f);
  if (g.rows.n) fwrite(g.rows.p, 1, g.rows.n, f);
  g.rows.n = 0;
  int bad = ferror(f);
  if (fclose(f) != 0 || bad)
    return acl_fail(ACL_ERROR_PROFILING_FAILURE, "%s: cannot write '%s': %s", call, path, strerror(errno));
  return ACL_SUCCESS;
}

aclError aclprofStop(const aclprofConfig *profilerConfig) {
  const char *call = "aclprofStop";
  if (!profilerConfig) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: profilerConfig is NULL", call);
  aclError e = enter(call);
  if (e) return e;
  if (!g.inited) return leave(acl_fail(ACL_ERROR_PROF_NOT_RUN, "%s: aclprofInit has not been called", call));
  if (!g.started)
    return leave(acl_fail(ACL_ERROR_PROF_NOT_RUN, "%s: aclprofStart has not been called", call));
  if (g.started != profilerConfig)
    return leave(
        acl_fail(ACL_ERROR_INVALID_PARAM, "%s: profilerConfig is not the one aclprofStart started", call));
  return leave(stop(call));
}

static void forget(void) {
  free(g.dir);
  g.dir = NULL;
  free(g.rows.p);
  g.rows = (text){0};
  g.inited = g.from_json = 0;
}

aclError aclprofFinalize(void) {
  const char *call = "aclprofFinalize";
  aclError e = enter(call);
  if (e) return e;
  if (!g.inited || g.from_json)
    return leave(acl_fail(ACL_ERROR_PROF_NOT_RUN, "%s: aclprofInit has not been called", call));
  if (g.started) e = stop(call);
  forget();
  return leave(e);
}

void acl_prof_init_config(acl_init_config *cfg) {
  if (!cfg->prof_on) return;
  pthread_mutex_lock(&g.mu);
  g.inited = g.from_json = 1;
  g.dir = cfg->prof_output;
  cfg->prof_output = NULL;
  g.json_config = (aclprofConfig){.ndevices = 1, .metrics = ACL_AICORE_NONE, .types = ACL_PROF_TASK_TIME};
  g.started = &g.json_config;
  g.rows.n = 0;
  update_active();
  pthread_mutex_unlock(&g.mu);
}

void acl_prof_finalize(void) {
  pthread_mutex_lock(&g.mu);
  if (g.inited && g.started) stop("aclFinalize");
  forget();
  while (g.subs) {
    subscription *s = g.subs;
    g.subs = s->next;
    close(s->fd);
    free(s);
  }
  update_active();
  pthread_mutex_unlock(&g.mu);
}

/* --- subscription */

aclprofSubscribeConfig *aclprofCreateSubscribeConfig(int8_t timeInfoSwitch,
                                                     aclprofAicoreMetrics aicoreMetrics, void *fd) {
  const char *call = "aclprofCreateSubscribeConfig";
  if (!fd || (timeInfoSwitch != 0 && timeInfoSwitch != 1)) {
    acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", call,
             !fd ? "fd is NULL (the address of the pipe's write end)" : "timeInfoSwitch must be 0 or 1");
    return NULL;
  }
  aclprofSubscribeConfig *c = malloc(sizeof *c);
  if (!c) {
    acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call);
    return NULL;
  }
  *c =
      (aclprofSubscribeConfig){.time_info = timeInfoSwitch, .metrics = aicoreMetrics, .fd = *(const int *)fd};
  return c;
}

aclError aclprofDestroySubscribeConfig(const aclprofSubscribeConfig *profSubscribeConfig) {
  if (!profSubscribeConfig)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "aclprofDestroySubscribeConfig: profSubscribeConfig is NULL");
  free((void *)profSubscribeConfig);
  return ACL_SUCCESS;
}

aclError aclprofModelSubscribe(uint32_t modelId, const aclprofSubscribeConfig *profSubscribeConfig) {
  const char *call = "aclprofModelSubscribe";
  if (!profSubscribeConfig) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: profSubscribeConfig is NULL", call);
  aclError e = acl_enter(call);
  if (e) return e;
  acl_model *m;
  e = acl_mdl_find(call, modelId, &m);
  acl_leave();
  if (e) return e;
  pthread_mutex_lock(&g.mu);
  for (subscription *s = g.subs; s; s = s->next)
    if (s->model_id == modelId)
      return leave(
          acl_fail(ACL_ERROR_PROF_REPEAT_SUBSCRIBE, "%s: model %u is subscribed already", call, modelId));
  subscription *s = malloc(sizeof *s);
  if (!s) return leave(acl_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", call));
  *s = (subscription){.next = g.subs,
                      .model_id = modelId,
                      .fd = profSubscribeConfig->fd,
                      .time_info = profSubscribeConfig->time_info};
  g.subs = s;
  update_active();
  return leave(ACL_SUCCESS);
}

aclError aclprofModelUnSubscribe(uint32_t modelId) {
  const char *call = "aclprofModelUnSubscribe";
  aclError e = acl_enter(call);
  if (e) return e;
  acl_model *m = acl_find_model(modelId);
  if (m) acl_model_use(m);
  acl_leave();
  if (m) pthread_mutex_lock(&m->run); /* an execution under way sends its records first */
  pthread_mutex_lock(&g.mu);
  subscription **p = &g.subs;
  while (*p && (*p)->model_id != modelId)
    p = &(*p)->next;
  subscription *s = *p;
  if (s) *p = s->next;
  update_active();
  pthread_mutex_unlock(&g.mu);
  if (m) pthread_mutex_unlock(&m->run), acl_model_release(m);
  if (!s) return acl_fail(ACL_ERROR_INVALID_MODEL_ID, "%s: model %u is not subscribed", call, modelId);
  close(s->fd);
  free(s);
  return ACL_SUCCESS;
}

/* An op record `index` of opInfo, or NULL (message recorded). */
static const op_record *record(const char *call, const void *opInfo, size_t opInfoLen, uint32_t index) {
  if (!opInfo || opInfoLen % sizeof(op_record) != 0 || index >= opInfoLen / sizeof(op_record)) {
    acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", call,
             !opInfo                              ? "opInfo is NULL"
             : opInfoLen % sizeof(op_record) != 0 ? "opInfoLen is not a multiple of aclprofGetOpDescSize"
                                                  : "index is past the last record");
    return NULL;
  }
  return (const op_record *)opInfo + index;
}

aclError aclprofGetOpDescSize(size_t *opDescSize) {
  if (!opDescSize) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclprofGetOpDescSize: opDescSize is NULL");
  *opDescSize = sizeof(op_record);
  return ACL_SUCCESS;
}

aclError aclprofGetOpNum(const void *opInfo, size_t opInfoLen, uint32_t *opNumber) {
  if (!opInfo || !opNumber || opInfoLen % sizeof(op_record) != 0)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "aclprofGetOpNum: %s",
                    !opInfo || !opNumber ? "NULL argument"
                                         : "opInfoLen is not a multiple of aclprofGetOpDescSize");
  *opNumber = (uint32_t)(opInfoLen / sizeof(op_record));
  return ACL_SUCCESS;
}

static aclError text_len(const char *call, const void *opInfo, size_t opInfoLen, uint32_t index, int name,
                         size_t *len) {
  const op_record *r = record(call, opInfo, opInfoLen, index);
  if (!r) return ACL_ERROR_INVALID_PARAM;
  if (!len) return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: the length's address is NULL", call);
  *len = strnlen(name ? r->op_name : r->op_type, name ? NAME_BYTES : TYPE_BYTES) + 1;
  return ACL_SUCCESS;
}

static aclError text_copy(const char *call, const void *opInfo, size_t opInfoLen, uint32_t index, int name,
                          char *out, size_t n) {
  size_t need;
  aclError e = text_len(call, opInfo, opInfoLen, index, name, &need);
  if (e) return e;
  if (!out || n < need)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", call,
                    !out ? "the buffer is NULL"
                         : "the buffer is shorter than its ...Len (the text and its NUL)");
  const op_record *r = (const op_record *)opInfo + index;
  memcpy(out, name ? r->op_name : r->op_type, need - 1);
  out[need - 1] = '\0';
  return ACL_SUCCESS;
}

aclError aclprofGetOpTypeLen(const void *opInfo, size_t opInfoLen, uint32_t index, size_t *opTypeLen) {
  return text_len("aclprofGetOpTypeLen", opInfo, opInfoLen, index, 0, opTypeLen);
}
aclError aclprofGetOpType(const void *opInfo, size_t opInfoLen, uint32_t index, char *opType,
                          size_t opTypeLen) {
  return text_copy("aclprofGetOpType", opInfo, opInfoLen, index, 0, opType, opTypeLen);
}
aclError aclprofGetOpNameLen(const void *opInfo, size_t opInfoLen, uint32_t index, size_t *opNameLen) {
  return text_len("aclprofGetOpNameLen", opInfo, opInfoLen, index, 1, opNameLen);
}
aclError aclprofGetOpName(const void *opInfo, size_t opInfoLen, uint32_t index, char *opName,
                          size_t opNameLen) {
  return text_copy("aclprofGetOpName", opInfo, opInfoLen, index, 1, opName, opNameLen);
}

uint64_t aclprofGetOpStart(const void *opInfo, size_t opInfoLen, uint32_t index) {
  const op_record *r = record("aclprofGetOpStart", opInfo, opInfoLen, index);
  return r ? r->start_ns : 0;
}
uint64_t aclprofGetOpEnd(const void *opInfo, size_t opInfoLen, uint32_t index) {
  const op_record *r = record("aclprofGetOpEnd", opInfo, opInfoLen, index);
  return r ? r->end_ns : 0;
}
uint64_t aclprofGetOpDuration(const void *opInfo, size_t opInfoLen, uint32_t index) {
  const op_record *r = record("aclprofGetOpDuration", opInfo, opInfoLen, index);
  return r ? r->end_ns - r->start_ns : 0;
}
size_t aclprofGetModelId(const void *opInfo, size_t opInfoLen, uint32_t index) {
  const op_record *r = record("aclprofGetModelId", opInfo, opInfoLen, index);
  return r ? r->model_id : 0;
}

/* --- executions (acl_trace.c) */

acl_prof_run *acl_prof_run_begin(acl_model *m) {
  if (!atomic_load(&g.active)) return NULL;
  pthread_mutex_lock(&g.mu);
  int rows = g.started && (g.started->types & ACL_PROF_TASK_TIME), fd = -1;
  for (subscription *s = g.subs; s; s = s->next)
    if (s->model_id == m->id && s->time_info) fd = s->fd;
  pthread_mutex_unlock(&g.mu);
  if (!rows && fd < 0) return NULL;
  acl_prof_run *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->m = m, r->rows = rows, r->fd = fd;
  r->iteration = rows ? ++m->prof_runs : 0;
  return r;
}

void acl_prof_task(acl_prof_run *r, const omrt_task_info *info, uint64_t start_ns, uint64_t end_ns) {
  uint64_t wait = r->last_end && start_ns > r->last_end ? start_ns - r->last_end : 0;
  r->last_end = end_ns;
  if (r->rows) {
    text *t = &r->csv;
    put(t, "0,", 2);
    put_field(t, acl_model_dump_name(r->m));
    putf(t, ",%u,%llu,%d,0,", r->m->id, (unsigned long long)r->iteration, info->index);
    put_field(t, info->name);
    put(t, ",", 1);
    put_field(t, info->kind);
    putf(t, ",AI_CORE,%llu.%03u,%.3f,%.3f,\"", (unsigned long long)(start_ns / 1000),
         (unsigned)(start_ns % 1000), (double)(end_ns - start_ns) / 1e3, (double)wait / 1e3);
    for (int k = 0; k < info->noutputs; k++) {
      const omrt_task_tensor *o = &info->outputs[k];
      put(t, k ? ";" : "", k ? 1 : 0);
      for (int d = 0; d < o->rank; d++)
        putf(t, "%s%lld", d ? "," : "", (long long)o->dims[d]);
    }
    put(t, "\",", 2);
    for (int k = 0; k < info->noutputs; k++)
      putf(t, "%s%s", k ? ";" : "", dtype_name(info->outputs[k].dtype));
    put(t, ",", 1);
    for (int k = 0; k < info->noutputs; k++)
      putf(t, "%s%s", k ? ";" : "", layout_name(info->outputs[k].layout));
    put(t, "\n", 1);
  }
  if (r->fd >= 0) {
    if (r->nrecs == r->cap) {
      size_t cap = r->cap ? 2 * r->cap : 64;
      op_record *p = realloc(r->recs, cap * sizeof *p);
      if (!p) return;
      r->recs = p, r->cap = cap;
    }
    op_record *o = &r->recs[r->nrecs++];
    memset(o, 0, sizeof *o);
    o->start_ns = start_ns, o->end_ns = end_ns;
    o->model_id = r->m->id, o->task_id = (uint32_t)info->index;
    snprintf(o->op_type, sizeof o->op_type, "%s", info->kind);
    snprintf(o->op_name, sizeof o->op_name, "%s", info->name);
  }
}

void acl_prof_run_end(acl_prof_run *r) {
  if (r->rows && r->csv.n) {
    pthread_mutex_lock(&g.mu);
    if (g.started) put(&g.rows, r->csv.p, r->csv.n);
    pthread_mutex_unlock(&g.mu);
  }
  const char *p = (const char *)r->recs;
  size_t left = r->nrecs * sizeof *r->recs;
  /* A pipe whose reader is gone fails the write with EPIPE (the records
   * are dropped) instead of killing the application with SIGPIPE: the
   * signal is blocked on this thread for the write and, if raised, taken. */
  sigset_t pipe_sig, old;
  sigemptyset(&pipe_sig);
  sigaddset(&pipe_sig, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_sig, &old);
  int broken = 0;
  while (left) { /* (the model's run mutex keeps the subscription's fd open) */
    ssize_t w = write(r->fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      broken = w < 0 && errno == EPIPE;
      break;
    }
    p += w, left -= (size_t)w;
  }
  if (broken && !sigismember(&old, SIGPIPE)) sigtimedwait(&pipe_sig, NULL, &(struct timespec){0});
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  free(r->csv.p);
  free(r->recs);
  free(r);
}
