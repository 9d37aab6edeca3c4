/* conformance.c - runs ONNX's node tests through atc and libomrt.
 *
 *   conformance [options] [NODE_TESTS_DIR]
 *
 * Every directory under NODE_TESTS_DIR (argument, else $ONNX_NODE_TESTS_DIR,
 * else the pinned copy ../shared/onnx-node-tests/node next to the source
 * tree) is one test, run once per precision mode (must_keep_origin_dtype,
 * force_fp16) by node_test.c: compiled in process by the atc library, run by
 * libomrt, compared with the test's outputs. A missing directory is an error
 * (exit 2), never a silent pass.
 *
 * Isolation: each (test, mode) runs in its own forked child that writes its
 * facts and its verdict into a pipe; the parent keeps --jobs children running
 * at once (default 2) and kills one that outlives --timeout. A crash, a hang,
 * an abort or an exit without a verdict is that test's failure ("crashed:
 * SIGSEGV", "timed out after 20 s"), and the run goes on. Children run under
 * an address-space limit (--memory, 4 GiB; none in sanitizer builds) so a
 * runaway allocation fails instead of swamping the machine. The parent prints one line per test and mode in
 * test order (name, mode, PASS/FAIL, the one-line reason cut to 160 characters), totals per mode, and ctest's
 * closing "N passed, M failed".
 *
 * --digests FILE writes each case's CRC-32C of its outputs, for comparing
 * two builds that must give bit-identical results.
 * --tsv FILE writes every result with the test's op, opset and dtypes for
 * tests/conformance/report.py. --expected FILE turns the run into a
 * regression guard: every "<mode> <test>" line names a case that passed
 * before; if one fails now the exit status is 1. Cases passing that are not
 * on the list are counted and reported, not failed.
 * --inject-crash / --inject-hang TEST make that test's child crash or hang on
 * purpose; they exist for the runner's own tests (test_runner.c).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "node_test.h"

#ifndef ONNX_NODE_TESTS_DEFAULT
#define ONNX_NODE_TESTS_DEFAULT "../shared/onnx-node-tests/node"
#endif

enum {
  NMODES = 2,
  REASON_MAX = 160, /* characters of a reason shown and stored */
  MAX_JOBS = 64,
  CHILD_OUTPUT_MAX = 16384, /* bytes of a child's pipe output kept */
};
/* Address space per child, MiB. Sanitizer builds reserve terabytes of
 * shadow memory up front, so there the default is no limit. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DEFAULT_MEMORY_LIMIT_MB 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define DEFAULT_MEMORY_LIMIT_MB 0
#endif
#endif
#ifndef DEFAULT_MEMORY_LIMIT_MB
#define DEFAULT_MEMORY_LIMIT_MB 4096
#endif

static const om_precision mode_precision[NMODES] = {OM_PRECISION_MUST_KEEP_ORIGIN_DTYPE,
                                                    OM_PRECISION_FORCE_FP16};
static const char *const mode_name[NMODES] = {"must_keep_origin_dtype", "force_fp16"};

typedef struct outcome {
  int done, pass;
  uint32_t digest; /* CRC-32C of the outputs (0: never ran) */
  char reason[REASON_MAX + 1];
} outcome;

typedef struct test_case {
  char *name;
  nt_meta meta;
  int have_meta;
  outcome res[NMODES];
  int expected[NMODES]; /* on the --expected list */
} test_case;

typedef struct runner {
  const char *root;
  int modes[NMODES]; /* which modes run */
  int jobs;
  unsigned threads;
  int timeout_s;
  long memory_mb; /* RLIMIT_AS of each child; 0: none */
  int quiet;
  const char *tsv_path, *expected_path, *filter, *digest_path;
  const char *inject_crash, *inject_hang;
  test_case *tests;
  int ntests;
} runner;

/* One running child. */
typedef struct slot {
  pid_t pid; /* 0: free */
  int fd;
  int test, mode;
  double deadline; /* seconds, monotonic */
  char out[CHILD_OUTPUT_MAX];
  size_t len;
} slot;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void set_reason(outcome *o, const char *text) {
  snprintf(o->reason, sizeof o->reason, "%s", text);
  o->reason[strcspn(o->reason, "\r\n\t")] = '\0';
}

static const char *signal_name(int sig) {
  switch (sig) {
  case SIGSEGV: return "SIGSEGV";
  case SIGABRT: return "SIGABRT";
  case SIGBUS: return "SIGBUS";
  case SIGFPE: return "SIGFPE";
  case SIGILL: return "SIGILL";
  case SIGKILL: return "SIGKILL";
  case SIGTERM: return "SIGTERM";
  case SIGTRAP: return "SIGTRAP";
  case SIGSYS: return "SIGSYS";
  case SIGPIPE: return "SIGPIPE";
  default: return NULL;
  }
}

/* --- discovery */

static int is_test_dir(const char *root, const char *name) {
  char path[4096];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s", root, name);
  return name[0] != '.' && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int find_tests(runner *r) {
  struct dirent **list = NULL;
  int n = scandir(r->root, &list, NULL, alphasort);
  if (n < 0) {
    fprintf(stderr, "conformance: cannot read the node-test directory '%s': %s\n", r->root, strerror(errno));
    return -1;
  }
  r->tests = calloc((size_t)n + 1, sizeof *r->tests);
  for (int i = 0; i < n; i++) {
    const char *name = list[i]->d_name;
    if (r->tests && is_test_dir(r->root, name) && (!r->filter || !fnmatch(r->filter, name, 0)))
      r->tests[r->ntests++].name = strdup(name);
    free(list[i]);
  }
  free(list);
  if (!r->tests) return -1;
  for (int i = 0; i < r->ntests; i++)
    if (!r->tests[i].name) return -1;
  return 0;
}

static int mode_index(const char *name) {
  for (int m = 0; m < NMODES; m++)
    if (!strcmp(name, mode_name[m])) return m;
  return -1;
}

static test_case *find_test(runner *r, const char *name) {
  for (int i = 0; i < r->ntests; i++)
    if (!strcmp(r->tests[i].name, name)) return &r->tests[i];
  return NULL;
}

/* Reads "<mode> <test>" lines ('#' starts a comment). Cases of tests this
 * run does not have are missing: counted into *missing (and printed) unless
 * a --filter excludes them. */
static int load_expected(runner *r, int *missing) {
  FILE *f = fopen(r->expected_path, "r");
  if (!f) {
    fprintf(stderr, "conformance: cannot open the expected-pass list '%s': %s\n", r->expected_path,
            strerror(errno));
    return -1;
  }
  char line[1024];
  int lineno = 0;
  *missing = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    char mode[64], test[512];
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    int k = sscanf(line, "%63s %511s", mode, test);
    if (k <= 0) continue;
    int m = k == 2 ? mode_index(mode) : -1;
    if (m < 0) {
      fprintf(stderr, "conformance: %s:%d: expected \"<mode> <test>\" with mode %s or %s\n", r->expected_path,
              lineno, mode_name[0], mode_name[1]);
      fclose(f);
      return -1;
    }
    if (!r->modes[m] || (r->filter && fnmatch(r->filter, test, 0))) continue;
    test_case *t = find_test(r, test);
    if (t) {
      t->expected[m] = 1;
    } else {
      (*missing)++;
      printf("%s %s FAIL: on the expected-pass list, but no such test in %s\n", test, mode_name[m], r->root);
    }
  }
  fclose(f);
  return 0;
}

/* --- the child */

static void child_main(const runner *r, int test, int mode, int fd, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  /* a killed runner (ctest's timeout) leaves no child behind */
  if (getppid() != parent) _exit(1); /* it died before prctl */
  /* Anything the libraries or an assert write goes into the pipe too. */
  dup2(fd, STDOUT_FILENO);
  dup2(fd, STDERR_FILENO);
  if (r->memory_mb > 0) {
    struct rlimit rl = {(rlim_t)r->memory_mb << 20, (rlim_t)r->memory_mb << 20};
    setrlimit(RLIMIT_AS, &rl);
  }
  const char *name = r->tests[test].name;
  nt_meta meta;
  nt_describe(r->root, name, &meta);
  dprintf(fd, "\001M\t%s\t%s\t%d\t%s\t%d\n", meta.op, meta.domain, meta.opset, meta.dtypes, meta.expanded);
  if (r->inject_crash && !strcmp(r->inject_crash, name)) raise(SIGSEGV);
  if (r->inject_hang && !strcmp(r->inject_hang, name))
    for (;;)
      pause();
  char dir[4096], reason[1024];
  snprintf(dir, sizeof dir, "%s/%s", r->root, name);
  /* In the test's directory, messages name "test_data_set_0/input_0.pb". */
  uint32_t digest = 0;
  int failed = chdir(dir) == 0
                   ? nt_run(".", mode_precision[mode], r->threads, reason, sizeof reason, &digest)
                   : nt_run(dir, mode_precision[mode], r->threads, reason, sizeof reason, &digest);
  dprintf(fd, "\001D\t%08x\n", digest);
  if (failed)
    dprintf(fd, "\001F\t%s\n", reason);
  else
    dprintf(fd, "\001P\n");
  _exit(0);
}

/* --- the parent */

static int start(runner *r, slot *s, int test, int mode) {
  int p[2];
  if (pipe(p) != 0) return -1;
  fflush(stdout);
  fflush(stderr);
  pid_t parent = getpid(), pid = fork();
  if (pid < 0) {
    close(p[0]), close(p[1]);
    return -1;
  }
  if (pid == 0) {
    close(p[0]);
    child_main(r, test, mode, p[1], parent);
  }
  close(p[1]);
  s->pid = pid;
  s->fd = p[0];
  s->test = test;
  s->mode = mode;
  s->deadline = now_s() + r->timeout_s;
  s->len = 0;
  return 0;
}

/* Turns a finished child's pipe output and wait status into its outcome. */
static void finish(runner *r, slot *s, int wstatus, int timed_out) {
  test_case *t = &r->tests[s->test];
  outcome *o = &t->res[s->mode];
  s->out[s->len < sizeof s->out ? s->len : sizeof s->out - 1] = '\0';
  const char *verdict = NULL, *note = NULL;
  for (char *line = s->out, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    if (line[0] == '\001' && line[1] == 'M' && !t->have_meta) {
      char *f[6] = {0};
      int k = 0;
      for (char *p = line + 3; p && k < 5; k++) {
        f[k] = p;
        p = strchr(p, '\t');
        if (p) *p++ = '\0';
      }
      if (k == 5 && f[4]) {
        snprintf(t->meta.op, sizeof t->meta.op, "%s", f[0]);
        snprintf(t->meta.domain, sizeof t->meta.domain, "%s", f[1]);
        t->meta.opset = atoi(f[2]);
        snprintf(t->meta.dtypes, sizeof t->meta.dtypes, "%s", f[3]);
        t->meta.expanded = atoi(f[4]);
        t->have_meta = 1;
      }
    } else if (line[0] == '\001' && line[1] == 'D' && line[2] == '\t') {
      o->digest = (uint32_t)strtoul(line + 3, NULL, 16);
    } else if (line[0] == '\001' && (line[1] == 'P' || line[1] == 'F')) {
      verdict = line + 1;
    } else if (line[0] && line[0] != '\001' && !note) {
      note = line; /* the first thing the child printed: an assert, a sanitizer */
    }
  }
  char buf[2048];
  o->done = 1;
  o->pass = 0;
  if (timed_out) {
    snprintf(buf, sizeof buf, "timed out after %d s", r->timeout_s);
  } else if (WIFSIGNALED(wstatus)) {
    const char *sig = signal_name(WTERMSIG(wstatus));
    int n = sig ? snprintf(buf, sizeof buf, "crashed: %s", sig)
                : snprintf(buf, sizeof buf, "crashed: signal %d", WTERMSIG(wstatus));
    if (verdict) n += snprintf(buf + n, sizeof buf - (size_t)n, " after its verdict (cleanup)");
    if (note) snprintf(buf + n, sizeof buf - (size_t)n, ": %.*s", REASON_MAX, note);
  } else if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    snprintf(buf, sizeof buf, "exited with status %d%s%.*s", WEXITSTATUS(wstatus), note ? ": " : "",
             REASON_MAX, note ? note : "");
  } else if (!verdict) {
    snprintf(buf, sizeof buf, "exited without a verdict%s%.*s", note ? ": " : "", REASON_MAX,
             note ? note : "");
  } else if (verdict[0] == 'P') {
    o->pass = 1;
    buf[0] = '\0';
  } else {
    snprintf(buf, sizeof buf, "%.*s", REASON_MAX, verdict[1] == '\t' ? verdict + 2 : "failed");
  }
  set_reason(o, buf);
  close(s->fd);
  s->pid = 0;
}

static int name_width;

static void print_case(const runner *r, const test_case *t, int m) {
  const outcome *o = &t->res[m];
  int regression = t->expected[m] && !o->pass;
  if (r->quiet && !regression) return;
  printf("%-*s %-22s %s%s%s%s\n", name_width, t->name, mode_name[m], o->pass ? "PASS" : "FAIL",
         regression ? " (REGRESSION: on the expected-pass list)" : "", o->reason[0] ? "  " : "", o->reason);
}

/* Runs every (test, mode) case, --jobs at a time; prints in test order. */
static int run_all(runner *r) {
  int ncases = r->ntests * NMODES, next = 0, running = 0, printed = 0;
  slot *slots = calloc((size_t)r->jobs, sizeof *slots);
  struct pollfd *pfd = calloc((size_t)r->jobs, sizeof *pfd);
  if (!slots || !pfd) return -1;
  while (next < ncases || running > 0) {
    for (int j = 0; j < r->jobs && next < ncases; j++) {
      if (slots[j].pid) continue;
      while (next < ncases && !r->modes[next % NMODES])
        next++;
      if (next == ncases) break;
      if (start(r, &slots[j], next / NMODES, next % NMODES) != 0) {
        fprintf(stderr, "conformance: cannot start a child: %s\n", strerror(errno));
        free(slots), free(pfd);
        return -1;
      }
      next++;
      running++;
    }
    double now = now_s(), wait = r->timeout_s;
    for (int j = 0; j < r->jobs; j++) {
      pfd[j] = (struct pollfd){.fd = slots[j].pid ? slots[j].fd : -1, .events = POLLIN};
      if (slots[j].pid && slots[j].deadline - now < wait) wait = slots[j].deadline - now;
    }
    int ms = wait <= 0 ? 0 : (int)(wait * 1000) + 1;
    if (poll(pfd, (nfds_t)r->jobs, ms) < 0 && errno != EINTR) {
      fprintf(stderr, "conformance: poll: %s\n", strerror(errno));
      free(slots), free(pfd);
      return -1;
    }
    now = now_s();
    for (int j = 0; j < r->jobs; j++) {
      slot *s = &slots[j];
      if (!s->pid) continue;
      int eof = 0;
      if (pfd[j].revents) {
        char scratch[4096];
        char *dst = s->len < sizeof s->out - 1 ? s->out + s->len : scratch;
        size_t room = s->len < sizeof s->out - 1 ? sizeof s->out - 1 - s->len : sizeof scratch;
        ssize_t n = read(s->fd, dst, room);
        if (n > 0 && dst != scratch) s->len += (size_t)n;
        eof = n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN);
      }
      int timed_out = !eof && now >= s->deadline;
      if (!eof && !timed_out) continue;
      int wstatus = 0;
      if (timed_out) kill(s->pid, SIGKILL);
      while (waitpid(s->pid, &wstatus, 0) < 0 && errno == EINTR) {
      }
      finish(r, s, wstatus, timed_out);
      running--;
    }
    /* Print every test whose modes are all done, in order. */
    for (; printed < r->ntests; printed++) {
      test_case *t = &r->tests[printed];
      int done = 1;
      for (int m = 0; m < NMODES; m++)
        done &= !r->modes[m] || t->res[m].done;
      if (!done) break;
      for (int m = 0; m < NMODES; m++)
        if (r->modes[m]) print_case(r, t, m);
      fflush(stdout);
    }
  }
  free(slots), free(pfd);
  return 0;
}

static int write_tsv(const runner *r) {
  FILE *f = fopen(r->tsv_path, "w");
  if (!f) {
    fprintf(stderr, "conformance: cannot write %s: %s\n", r->tsv_path, strerror(errno));
    return -1;
  }
  fprintf(f, "# conformance results for %s\n", r->root);
  for (int m = 0; m < NMODES; m++) {
    nt_tolerance tol = nt_tolerance_for(mode_precision[m]);
    if (r->modes[m])
      fprintf(
          f, "# tolerance %s: |got - expected| <= %g + %g * |expected| for floats; integers and bool exact\n",
          mode_name[m], tol.atol, tol.rtol);
  }
  fprintf(f, "# tolerance of the storage dtypes (every mode): float8, float4 and e8m0 results exact once "
             "decoded (NaN matches NaN); bf16 results |got - expected| <= atol + max(rtol, 2^-7) * "
             "|expected| (one bf16 unit in the last place)\n");
  fprintf(f, "test\tmode\tresult\top\tdomain\topset\tdtypes\texpanded\treason\n");
  for (int i = 0; i < r->ntests; i++) {
    const test_case *t = &r->tests[i];
    for (int m = 0; m < NMODES; m++) {
      if (!r->modes[m]) continue;
      const outcome *o = &t->res[m];
      fprintf(f, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%d\t%s\n", t->name, mode_name[m], o->pass ? "PASS" : "FAIL",
              t->have_meta ? t->meta.op : "?", t->have_meta ? t->meta.domain : "?", t->meta.opset,
              t->meta.dtypes[0] ? t->meta.dtypes : "?", t->meta.expanded, o->reason);
    }
  }
  if (fclose(f) != 0) {
    fprintf(stderr, "conformance: cannot write %s\n", r->tsv_path);
    return -1;
  }
  return 0;
}

/* "<test> <mode> <crc32c of the outputs>" per case: two runs that must give
 * the same results (a refactor) compare these files. */
static int write_digests(const runner *r) {
  FILE *f = fopen(r->digest_path, "w");
  if (!f) {
    fprintf(stderr, "conformance: cannot write %s: %s\n", r->digest_path, strerror(errno));
    return -1;
  }
  for (int i = 0; i < r->ntests; i++)
    for (int m = 0; m < NMODES; m++)
      if (r->modes[m]) fprintf(f, "%s %s %08x\n", r->tests[i].name, mode_name[m], r->tests[i].res[m].digest);
  if (fclose(f) != 0) {
    fprintf(stderr, "conformance: cannot write %s\n", r->digest_path);
    return -1;
  }
  return 0;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: conformance [options] [NODE_TESTS_DIR]\n"
          "  NODE_TESTS_DIR     default: $ONNX_NODE_TESTS_DIR, else %s\n"
          "  --mode=M           must_keep_origin_dtype, force_fp16 or both (default both)\n"
          "  --jobs=N           children at once (default 2; 0: one per online CPU)\n"
          "  --threads=N        runtime worker threads per test (default 0: the runtime's own)\n"
          "  --timeout=S        seconds per test and mode (default 20)\n"
          "  --memory=MIB       address-space limit of each child (default %d; 0: none)\n"
          "  --filter=GLOB      only tests whose name matches (fnmatch)\n"
          "  --tsv=FILE         write every result, with op, opset and dtypes\n"
          "  --digests=FILE     write each case's CRC-32C of its outputs (0: did not run)\n"
          "  --expected=FILE    fail (exit 1) when a listed \"<mode> <test>\" case fails\n"
          "  --quiet            print only regressions and the totals\n"
          "  --inject-crash=T, --inject-hang=T  make test T's child crash / hang (self-tests)\n",
          ONNX_NODE_TESTS_DEFAULT, DEFAULT_MEMORY_LIMIT_MB);
}

/* "--name=value" or "--name value". */
static const char *opt_value(int argc, char **argv, int *i, const char *name) {
  size_t n = strlen(name);
  if (strncmp(argv[*i], name, n)) return NULL;
  if (argv[*i][n] == '=') return argv[*i] + n + 1;
  if (argv[*i][n] == '\0' && *i + 1 < argc) return argv[++*i];
  return NULL;
}

/* Static: the children inherit it, and its tests stay reachable there. */
static runner r = {.modes = {1, 1}, .jobs = 2, .timeout_s = 20, .memory_mb = DEFAULT_MEMORY_LIMIT_MB};

static void free_tests(void) {
  for (int i = 0; i < r.ntests; i++)
    free(r.tests[i].name);
  free(r.tests);
  r.tests = NULL;
  r.ntests = 0;
}

int main(int argc, char **argv) {
  const char *v;
  for (int i = 1; i < argc; i++) {
    if ((v = opt_value(argc, argv, &i, "--mode"))) {
      int m = mode_index(v);
      if (m < 0 && strcmp(v, "both")) {
        fprintf(stderr, "conformance: --mode: '%s' is not must_keep_origin_dtype, force_fp16 or both\n", v);
        return 2;
      }
      for (int k = 0; k < NMODES; k++)
        r.modes[k] = m < 0 || m == k;
    } else if ((v = opt_value(argc, argv, &i, "--jobs"))) {
      r.jobs = atoi(v);
      if (r.jobs <= 0) r.jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
      if (r.jobs <= 0) r.jobs = 1;
      if (r.jobs > MAX_JOBS) r.jobs = MAX_JOBS;
    } else if ((v = opt_value(argc, argv, &i, "--threads"))) {
      r.threads = (unsigned)atoi(v);
    } else if ((v = opt_value(argc, argv, &i, "--timeout"))) {
      r.timeout_s = atoi(v) > 0 ? atoi(v) : 20;
    } else if ((v = opt_value(argc, argv, &i, "--memory"))) {
      r.memory_mb = atol(v);
    } else if ((v = opt_value(argc, argv, &i, "--filter"))) {
      r.filter = v;
    } else if ((v = opt_value(argc, argv, &i, "--tsv"))) {
      r.tsv_path = v;
    } else if ((v = opt_value(argc, argv, &i, "--digests"))) {
      r.digest_path = v;
    } else if ((v = opt_value(argc, argv, &i, "--expected"))) {
      r.expected_path = v;
    } else if ((v = opt_value(argc, argv, &i, "--inject-crash"))) {
      r.inject_crash = v;
    } else if ((v = opt_value(argc, argv, &i, "--inject-hang"))) {
      r.inject_hang = v;
    } else if (!strcmp(argv[i], "--quiet")) {
      r.quiet = 1;
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else if (argv[i][0] == '-' || r.root) {
      fprintf(stderr, "conformance: unexpected argument '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    } else {
      r.root = argv[i];
    }
  }
  if (!r.root) r.root = getenv("ONNX_NODE_TESTS_DIR");
  if (!r.root || !*r.root) r.root = ONNX_NODE_TESTS_DEFAULT;
  struct stat st;
  if (stat(r.root, &st) != 0 || !S_ISDIR(st.st_mode)) {
    fprintf(stderr,
            "conformance: the ONNX node-test directory '%s' does not exist; nothing was tested "
            "(pass the directory or set ONNX_NODE_TESTS_DIR)\n",
            r.root);
    printf("0 passed, 1 failed\n");
    return 2;
  }
  if (find_tests(&r) != 0) return 2;
  if (r.ntests == 0) {
    fprintf(stderr, "conformance: no test directories in '%s'%s%s\n", r.root, r.filter ? " matching " : "",
            r.filter ? r.filter : "");
    printf("0 passed, 1 failed\n");
    return 2;
  }
  int missing = 0;
  if (r.expected_path && load_expected(&r, &missing) != 0) return 2;
  for (int i = 0; i < r.ntests; i++) {
    int w = (int)strlen(r.tests[i].name);
    if (w > name_width) name_width = w;
  }
  signal(SIGPIPE, SIG_IGN);

  double t0 = now_s();
  if (run_all(&r) != 0) return 2;
  double elapsed = now_s() - t0;
  if (r.tsv_path && write_tsv(&r) != 0) return 2;
  if (r.digest_path && write_digests(&r) != 0) return 2;

  int passed = 0, failed = 0, regressions = 0, newly = 0;
  printf("\n");
  for (int m = 0; m < NMODES; m++) {
    if (!r.modes[m]) continue;
    int p = 0;
    for (int i = 0; i < r.ntests; i++) {
      const test_case *t = &r.tests[i];
      p += t->res[m].pass;
      regressions += t->expected[m] && !t->res[m].pass;
      newly += !t->expected[m] && t->res[m].pass;
    }
    nt_tolerance tol = nt_tolerance_for(mode_precision[m]);
    printf("%-22s %4d of %d tests pass (floats: atol %g + rtol %g x |expected|; integers, bool exact)\n",
           mode_name[m], p, r.ntests, tol.atol, tol.rtol);
    passed += p;
    failed += r.ntests - p;
  }
  printf("%d cases in %.1f s, %d at a time\n", passed + failed, elapsed, r.jobs);
  if (r.expected_path) {
    if (regressions + missing)
      printf("%d regressions: cases on %s fail now (lines marked REGRESSION above)\n", regressions + missing,
             r.expected_path);
    if (newly)
      printf("%d newly passing: update expected_pass.txt with scripts/conformance.sh --update\n", newly);
  }
  printf("%d passed, %d failed\n", passed, failed);
  free_tests();
  return r.expected_path && regressions + missing ? 1 : 0;
}
