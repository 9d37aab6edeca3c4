/* fma_peak - this machine's fp32 FMA peak, the yardstick of bench/run.sh.
 *
 *   fma_peak [--threads 1,2] [--seconds S] [--int8]
 *
 * Each thread runs a loop of fp32 FMAs as wide as the CPU has them (16 lanes
 * with AVX-512F, else 8 with AVX2+FMA, chosen at run time with
 * __builtin_cpu_supports) on ACC independent accumulator chains, so the
 * loop is bound by FMA throughput, not by its latency (two FMA pipes x about
 * 4-5 cycles latency needs at least 10 chains in flight). Some CPUs run a
 * 512-bit FMA as two 256-bit halves (Zen 4) and others at full width (Zen 5,
 * Xeon with two FMA units): the widest FMA is the machine's peak either way,
 * and the one ONNX Runtime's kernels use. All threads start together at a
 * barrier and keep running windows of about 2 ms each for the whole
 * measurement; each thread keeps its fastest window, and the figure is the
 * sum over the threads of flops per fastest window. Taking the fastest of
 * many short windows finds the peak even when other work shares the machine
 * (it only has to leave some windows alone); on an idle machine it equals the
 * sustained rate. One FMA counts as 2 flops.
 * Without AVX2+FMA a portable C loop on the same chains is measured instead
 * (and the "isa" field says so).
 *
 * --int8 measures the int8 yardstick of the QCONV2D kernels instead: the same
 * chains of vpdpbusd (AVX-512 VNNI: 16 lanes x 4 u8 x i8 products added
 * into int32), 64 multiply-adds = 128 int8 ops each; without VNNI it says
 * so and measures nothing.
 *
 * Output, one line per thread count (read by bench/run.sh):
 *   fma_peak: threads 1, isa avx512f, 123.45 GFLOP/s
 *   fma_peak: threads 1, isa avx512vnni, 456.78 GOP/s int8      (--int8)
 *
 * Build: cc -O2 -pthread bench/fma_peak.c -o fma_peak   (no -mavx2 needed)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAVE_X86 1
#else
#define HAVE_X86 0
#endif

enum { ACC = 12, INNER = 1000 };

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Keeps results alive so the compiler cannot drop the loops. */
static volatile float sink;

#if HAVE_X86
/* iters x INNER x ACC FMAs of LANES lanes each, on vectors of type V. */
#define SET1_I32(f) _mm512_set1_epi32((int)((f)*1000.0f))
#define FMA_LOOP(V, SET1, FMADD, ADD)                                                                        \
  V a[ACC];                                                                                                  \
  const V x = SET1(0.999999f), y = SET1(1e-7f);                                                              \
  for (int k = 0; k < ACC; k++)                                                                              \
    a[k] = SET1((float)k);                                                                                   \
  for (long i = 0; i < iters; i++) {                                                                         \
    for (int j = 0; j < INNER; j++) {                                                                        \
      /* written out so each chain is one register */                                                        \
      a[0] = FMADD(a[0], x, y), a[1] = FMADD(a[1], x, y), a[2] = FMADD(a[2], x, y);                          \
      a[3] = FMADD(a[3], x, y), a[4] = FMADD(a[4], x, y), a[5] = FMADD(a[5], x, y);                          \
      a[6] = FMADD(a[6], x, y), a[7] = FMADD(a[7], x, y), a[8] = FMADD(a[8], x, y);                          \
      a[9] = FMADD(a[9], x, y), a[10] = FMADD(a[10], x, y), a[11] = FMADD(a[11], x, y);                      \
    }                                                                                                        \
  }                                                                                                          \
  V s = a[0];                                                                                                \
  for (int k = 1; k < ACC; k++)                                                                              \
    s = ADD(s, a[k]);

__attribute__((target("avx2,fma"))) static void fma_avx2(long iters) {
  FMA_LOOP(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps)
  float out[8];
  _mm256_storeu_ps(out, s);
  sink = out[0];
}

/* vpdpbusd on ACC chains: a[k] += 4 u8 x 4 i8 per lane. */
__attribute__((target("avx512f,avx512vnni"))) static void dot_vnni(long iters) {
  FMA_LOOP(__m512i, SET1_I32, _mm512_dpbusd_epi32, _mm512_add_epi32)
  int32_t out[16];
  _mm512_storeu_si512(out, s);
  sink = (float)out[0];
}

__attribute__((target("avx512f"))) static void fma_avx512(long iters) {
  FMA_LOOP(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps)
  float out[16];
  _mm512_storeu_ps(out, s);
  sink = out[0];
}
#endif

/* The same work, 8 lanes per chain in plain C (what the compiler makes of it). */
static void fma_portable(long iters) {
  float a[ACC][8];
  const float x = 0.999999f, y = 1e-7f;
  for (int k = 0; k < ACC; k++)
    for (int l = 0; l < 8; l++)
      a[k][l] = (float)k;
  for (long i = 0; i < iters; i++)
    for (int j = 0; j < INNER; j++)
      for (int k = 0; k < ACC; k++)
        for (int l = 0; l < 8; l++)
          a[k][l] = a[k][l] * x + y;
  float s = 0;
  for (int k = 0; k < ACC; k++)
    s += a[k][0];
  sink = s;
}

static int lanes = 8;                      /* of the FMAs measured: 16 (AVX-512F), 8 (AVX2+FMA or portable) */
static int use_avx2, use_avx512, use_vnni; /* use_vnni: --int8 on a CPU with AVX-512 VNNI */
static pthread_barrier_t start_barrier;

typedef struct job {
  long iters;     /* outer iterations per window */
  double seconds; /* how long to keep measuring windows */
  double best;    /* fastest window (s) */
} job;

static void run_window(long iters) {
#if HAVE_X86
  if (use_vnni)
    dot_vnni(iters);
  else if (use_avx512)
    fma_avx512(iters);
  else if (use_avx2)
    fma_avx2(iters);
  else
#endif
    fma_portable(iters);
}

static void *worker(void *p) {
  job *j = p;
  pthread_barrier_wait(&start_barrier);
  double start = now_s(), t = start;
  j->best = 1e30;
  do {
    double t0 = now_s();
    run_window(j->iters);
    t = now_s();
    if (t - t0 < j->best) j->best = t - t0;
  } while (t - start < j->seconds);
  return NULL;
}

/* GFLOP/s of `threads` threads running windows of `iters` for `seconds`. */
static double measure(int threads, long iters, double seconds) {
  pthread_t tid[64];
  job jobs[64];
  pthread_barrier_init(&start_barrier, NULL, (unsigned)threads);
  for (int t = 1; t < threads; t++) {
    jobs[t] = (job){.iters = iters, .seconds = seconds};
    if (pthread_create(&tid[t], NULL, worker, &jobs[t]) != 0) {
      fprintf(stderr, "fma_peak: cannot start thread %d\n", t);
      exit(1);
    }
  }
  jobs[0] = (job){.iters = iters, .seconds = seconds};
  worker(&jobs[0]);
  double gflops = 0;
  for (int t = 0; t < threads; t++) {
    if (t) pthread_join(tid[t], NULL);
    gflops += 2.0 * lanes * ACC * INNER * (double)iters / jobs[t].best / 1e9;
  }
  pthread_barrier_destroy(&start_barrier);
  return gflops;
}

int main(int argc, char **argv) {
  const char *list = "1,2";
  double seconds = 0.5;
  int int8 = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      list = argv[++i];
    else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
      seconds = atof(argv[++i]);
    else if (!strcmp(argv[i], "--int8"))
      int8 = 1;
    else {
      fprintf(stderr, "usage: fma_peak [--threads 1,2] [--seconds S] [--int8]\n");
      return 1;
    }
  }
  if (seconds <= 0) seconds = 0.5;
#if HAVE_X86
  __builtin_cpu_init();
  use_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  use_avx512 = __builtin_cpu_supports("avx512f");
  if (use_avx512) lanes = 16;
  use_vnni = int8 && use_avx512 && __builtin_cpu_supports("avx512vnni");
#endif
  if (int8 && !use_vnni) {
    fprintf(stderr, "fma_peak: --int8 needs AVX-512 VNNI, which this CPU lacks\n");
    return 1;
  }
  const char *isa = use_vnni ? "avx512vnni" : use_avx512 ? "avx512f" : use_avx2 ? "avx2+fma" : "portable-c";

  /* Calibrate on one thread: outer iterations for a window of about 2 ms. */
  long iters = 1;
  for (;;) {
    double t0 = now_s();
    run_window(iters);
    double dt = now_s() - t0;
    if (dt > 0.0005 || iters > (1L << 40)) {
      iters = (long)((double)iters * 0.002 / dt) + 1;
      break;
    }
    iters *= 2;
  }
  for (const char *s = list; *s;) {
    char *end;
    long threads = strtol(s, &end, 10);
    if (end == s || threads < 1 || threads > 64) {
      fprintf(stderr, "fma_peak: bad --threads list '%s'\n", list);
      return 1;
    }
    double best = measure((int)threads, iters, seconds);
    if (use_vnni) /* 64 multiply-adds per instruction: 4x the 16 lanes of an FMA */
      printf("fma_peak: threads %ld, isa %s, %.2f GOP/s int8\n", threads, isa, 4 * best);
    else
      printf("fma_peak: threads %ld, isa %s, %.2f GFLOP/s\n", threads, isa, best);
    fflush(stdout);
    s = *end == ',' ? end + 1 : end;
  }
  return 0;
}
