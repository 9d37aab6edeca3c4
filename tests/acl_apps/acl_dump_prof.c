/* acl_dump_prof.c - accuracy dump and profiling as the public AscendCL
 * documentation lays them out, written as an application would use them,
 * against the public headers only (acl.h, acl_prof.h, acl_dump.h): every
 * call's return code checked, every resource released.
 *
 *   acl_dump_prof dump MODEL.om ACL.json IN.bin RUNS
 *     aclInit(ACL.json with a "dump" section) -> aclrtSetDevice ->
 *     aclmdlLoadFromFile -> aclmdlExecute RUNS times -> unload ->
 *     aclFinalize: the dump files are the configuration's.
 *   acl_dump_prof setdump MODEL.om DUMP.json IN.bin RUNS CB_DIR
 *     aclInit(NULL) -> aclmdlInitDump -> aclmdlSetDump(DUMP.json) -> load
 *     -> execute RUNS times -> aclmdlFinalizeDump -> one more execution
 *     (not dumped) -> unload; then aclmdlInitDump -> acldumpRegCallback ->
 *     load -> execute once -> acldumpUnregCallback -> aclmdlFinalizeDump:
 *     the callback writes each file's chunks to CB_DIR/<file name>,
 *     checking that they come in order and end with isLastChunk.
 *   acl_dump_prof prof MODEL.om PROF_DIR IN.bin RUNS RECORDS.txt
 *     aclprofInit(PROF_DIR) -> aclprofCreateConfig(device 0,
 *     ACL_PROF_TASK_TIME) -> aclprofStart -> execute RUNS times ->
 *     aclprofStop -> aclprofDestroyConfig -> aclprofFinalize; then the
 *     subscription: pipe -> aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE,
 *     &write end) -> aclprofModelSubscribe -> a thread reads the pipe ->
 *     execute RUNS times -> aclprofModelUnSubscribe (closes the write end:
 *     the reader sees its end) -> each record as a line of RECORDS.txt:
 *     model id, op type, op name, start, end, duration (ns).
 *
 * IN.bin holds the model's one input exactly. Exit 0 when every call did
 * what the documentation says.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_dump.h"
#include "acl/acl_prof.h"

static int failed(const char *what, aclError ret) {
  const char *msg = aclGetRecentErrMsg();
  fprintf(stderr, "[ERROR] %s: error %d: %s\n", what, ret, msg ? msg : "(no message)");
  return 1;
}
#define CHECK(call)                                                                                          \
  do {                                                                                                       \
    aclError ret_ = (call);                                                                                  \
    if (ret_ != ACL_SUCCESS) return failed(#call, ret_);                                                     \
  } while (0)

typedef struct model {
  uint32_t id;
  aclmdlDesc *desc;
  aclmdlDataset *in, *out;
} model;

static void release(model *m) {
  for (int k = 0; k < 2; k++) {
    aclmdlDataset *d = k ? m->out : m->in;
    if (!d) continue;
    for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(d); i++) {
      aclDataBuffer *b = aclmdlGetDatasetBuffer(d, i);
      aclrtFree(aclGetDataBufferAddr(b));
      aclDestroyDataBuffer(b);
    }
    aclmdlDestroyDataset(d);
  }
  if (m->desc) aclmdlDestroyDesc(m->desc);
  memset(m, 0, sizeof *m);
}

/* Loads path and fills its one input from `input`, outputs on the device. */
static int load(const char *path, const char *input, model *m) {
  memset(m, 0, sizeof *m);
  CHECK(aclmdlLoadFromFile(path, &m->id));
  m->desc = aclmdlCreateDesc();
  if (!m->desc) return failed("aclmdlCreateDesc", -1);
  CHECK(aclmdlGetDesc(m->desc, m->id));
  if (aclmdlGetNumInputs(m->desc) != 1) return fprintf(stderr, "[ERROR] the model must have 1 input\n"), 1;
  size_t size = aclmdlGetInputSizeByIndex(m->desc, 0);
  void *host = malloc(size), *dev = NULL;
  FILE *f = fopen(input, "rb");
  size_t got = f && host ? fread(host, 1, size, f) : 0;
  if (f) fclose(f);
  if (got != size) {
    free(host);
    return fprintf(stderr, "[ERROR] %s: wanted %zu bytes\n", input, size), 1;
  }
  aclError e = aclrtMalloc(&dev, size, ACL_MEM_MALLOC_HUGE_FIRST);
  if (!e) e = aclrtMemcpy(dev, size, host, size, ACL_MEMCPY_HOST_TO_DEVICE);
  free(host);
  m->in = aclmdlCreateDataset();
  m->out = aclmdlCreateDataset();
  if (e || !m->in || !m->out) return aclrtFree(dev), failed("input", e);
  CHECK(aclmdlAddDatasetBuffer(m->in, aclCreateDataBuffer(dev, size)));
  for (size_t i = 0; i < aclmdlGetNumOutputs(m->desc); i++) {
    size_t n = aclmdlGetOutputSizeByIndex(m->desc, i);
    CHECK(aclrtMalloc(&dev, n, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclmdlAddDatasetBuffer(m->out, aclCreateDataBuffer(dev, n)));
  }
  return 0;
}

static int unload(model *m) {
  aclError e = aclmdlUnload(m->id);
  release(m);
  return e ? failed("aclmdlUnload", e) : 0;
}

static int run(model *m, int runs) {
  for (int r = 0; r < runs; r++)
    CHECK(aclmdlExecute(m->id, m->in, m->out));
  return 0;
}

/* --- dump */

static const char *cb_dir;
static char cb_file[4096];
static int64_t cb_next; /* the next chunk's offset in cb_file */
static int cb_files, cb_bad;

static int32_t on_chunk(const acldumpChunk *c, int32_t len) {
  const char *base = strrchr(c->fileName, '/') ? strrchr(c->fileName, '/') + 1 : c->fileName;
  if (len != (int32_t)(sizeof *c + c->bufLen)) cb_bad = 1;
  if (strcmp(c->fileName, cb_file) != 0) { /* a new file starts at 0 */
    snprintf(cb_file, sizeof cb_file, "%s", c->fileName);
    cb_next = 0;
  }
  if (c->offset != cb_next) cb_bad = 1;
  char path[4096 + 256];
  snprintf(path, sizeof path, "%s/%s", cb_dir, base);
  FILE *f = fopen(path, c->offset == 0 ? "wb" : "ab");
  if (!f || fwrite(c->dataBuf, 1, c->bufLen, f) != c->bufLen) cb_bad = 1;
  if (f) fclose(f);
  cb_next += c->bufLen;
  if (c->isLastChunk) cb_files++, cb_file[0] = '\0';
  return 0;
}

static int dump(const char *om, const char *json, const char *input, int runs) {
  CHECK(aclInit(json));
  CHECK(aclrtSetDevice(0));
  model m;
  if (load(om, input, &m) || run(&m, runs) || unload(&m)) return 1;
  CHECK(aclrtResetDevice(0));
  CHECK(aclFinalize());
  return 0;
}

static int setdump(const char *om, const char *json, const char *input, int runs, const char *dir) {
  CHECK(aclInit(NULL));
  CHECK(aclrtSetDevice(0));
  CHECK(aclmdlInitDump());
  CHECK(aclmdlSetDump(json));
  model m;
  if (load(om, input, &m) || run(&m, runs)) return 1;
  CHECK(aclmdlFinalizeDump());
  if (run(&m, 1) || unload(&m)) return 1;
  /* the same dump to a callback */
  cb_dir = dir;
  CHECK(aclmdlInitDump());
  CHECK(acldumpRegCallback(on_chunk, 0));
  if (load(om, input, &m) || run(&m, 1) || unload(&m)) return 1;
  acldumpUnregCallback();
  CHECK(aclmdlFinalizeDump());
  printf("callback: %d files%s\n", cb_files, cb_bad ? ", chunks out of order" : "");
  CHECK(aclrtResetDevice(0));
  CHECK(aclFinalize());
  return cb_bad || cb_files == 0;
}

/* --- profiling */

typedef struct reader {
  int fd;
  char *buf;
  size_t n, cap;
  int err;
} reader;

static void *read_pipe(void *arg) {
  reader *r = arg;
  for (;;) {
    if (r->n == r->cap) {
      size_t cap = r->cap ? 2 * r->cap : 1 << 16;
      char *p = realloc(r->buf, cap);
      if (!p) return r->err = ENOMEM, NULL;
      r->buf = p, r->cap = cap;
    }
    ssize_t got = read(r->fd, r->buf + r->n, r->cap - r->n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return r->err = errno, NULL;
    if (got == 0) return NULL; /* aclprofModelUnSubscribe closed the write end */
    r->n += (size_t)got;
  }
}

static int prof(const char *om, const char *dir, const char *input, int runs, const char *records) {
  CHECK(aclInit(NULL));
  CHECK(aclrtSetDevice(0));
  if (aclprofFinalize() != ACL_ERROR_PROF_NOT_RUN)
    return fprintf(stderr, "[ERROR] aclprofFinalize before Init\n"), 1;
  CHECK(aclprofInit(dir, strlen(dir)));
  uint32_t devices[1] = {0};
  aclprofConfig *config =
      aclprofCreateConfig(devices, 1, ACL_AICORE_NONE, NULL, ACL_PROF_TASK_TIME | ACL_PROF_ACL_API);
  if (!config) return failed("aclprofCreateConfig", -1);
  CHECK(aclprofStart(config));
  model m;
  if (load(om, input, &m) || run(&m, runs)) return 1;
  CHECK(aclprofStop(config));
  CHECK(aclprofDestroyConfig(config));
  CHECK(aclprofFinalize());

  int fds[2];
  if (pipe(fds) != 0) return fprintf(stderr, "[ERROR] pipe: %s\n", strerror(errno)), 1;
  aclprofSubscribeConfig *sub = aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, &fds[1]);
  if (!sub) return failed("aclprofCreateSubscribeConfig", -1);
  CHECK(aclprofModelSubscribe(m.id, sub));
  reader rd = {.fd = fds[0]};
  pthread_t t;
  if (pthread_create(&t, NULL, read_pipe, &rd) != 0) return fprintf(stderr, "[ERROR] pthread_create\n"), 1;
  if (run(&m, runs)) return 1;
  CHECK(aclprofModelUnSubscribe(m.id));
  pthread_join(t, NULL);
  close(fds[0]);
  CHECK(aclprofDestroySubscribeConfig(sub));
  if (rd.err) return fprintf(stderr, "[ERROR] reading the pipe: %s\n", strerror(rd.err)), 1;
  size_t size;
  uint32_t n;
  CHECK(aclprofGetOpDescSize(&size));
  CHECK(aclprofGetOpNum(rd.buf, rd.n, &n));
  FILE *f = fopen(records, "w");
  if (!f) return fprintf(stderr, "[ERROR] %s: %s\n", records, strerror(errno)), 1;
  for (uint32_t i = 0; i < n; i++) {
    size_t tl, nl;
    CHECK(aclprofGetOpTypeLen(rd.buf, rd.n, i, &tl));
    CHECK(aclprofGetOpNameLen(rd.buf, rd.n, i, &nl));
    char *type = malloc(tl), *name = malloc(nl);
    if (!type || !name) return fprintf(stderr, "[ERROR] out of memory\n"), 1;
    CHECK(aclprofGetOpType(rd.buf, rd.n, i, type, tl));
    CHECK(aclprofGetOpName(rd.buf, rd.n, i, name, nl));
    fprintf(f, "%zu\t%s\t%s\t%llu\t%llu\t%llu\n", aclprofGetModelId(rd.buf, rd.n, i), type, name,
            (unsigned long long)aclprofGetOpStart(rd.buf, rd.n, i),
            (unsigned long long)aclprofGetOpEnd(rd.buf, rd.n, i),
            (unsigned long long)aclprofGetOpDuration(rd.buf, rd.n, i));
    free(type);
    free(name);
  }
  fclose(f);
  printf("subscription: %u records of %zu bytes for %d runs of model %u\n", n, size, runs, m.id);
  free(rd.buf);
  if (unload(&m)) return 1;
  CHECK(aclrtResetDevice(0));
  CHECK(aclFinalize());
  return 0;
}

int main(int argc, char **argv) {
  const char *usage = "usage: acl_dump_prof dump MODEL.om ACL.json IN.bin RUNS\n"
                      "       acl_dump_prof setdump MODEL.om DUMP.json IN.bin RUNS CB_DIR\n"
                      "       acl_dump_prof prof MODEL.om PROF_DIR IN.bin RUNS RECORDS.txt\n";
  if (argc < 6) return fputs(usage, stderr), 2;
  int runs = atoi(argv[5]);
  if (!strcmp(argv[1], "dump")) return dump(argv[2], argv[3], argv[4], runs);
  if (!strcmp(argv[1], "setdump") && argc == 7) return setdump(argv[2], argv[3], argv[4], runs, argv[6]);
  if (!strcmp(argv[1], "prof") && argc == 7) return prof(argv[2], argv[3], argv[4], runs, argv[6]);
  return fputs(usage, stderr), 2;
}
