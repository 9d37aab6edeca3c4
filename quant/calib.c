/* calib.c - activation range calibration (quant/calib.h): a histogram of
 * |x| that widens by merging bins, and the min-max, percentile and entropy
 * (KL divergence) ranges read from it.
 *
 * Design. The histogram is of |x| rather than of x: quantized activations
 * here are either post-ReLU (all of the mass on one side) or roughly
 * symmetric, and one threshold for both tails is what TensorRT's and ONNX
 * Runtime's entropy methods compute. The sign of the data is kept by the
 * min and max: a clipped range never reaches past the values seen.
 */
#include "quant/calib.h"

#include <math.h>
#include <string.h>

void qc_init(qc_stats *s) { memset(s, 0, sizeof *s); }

/* Bins merged in pairs: the width doubles. */
static void widen(qc_stats *s) {
  for (int i = 0; i < QC_BINS / 2; i++)
    s->count[i] = s->count[2 * i] + s->count[2 * i + 1];
  memset(s->count + QC_BINS / 2, 0, sizeof s->count / 2);
  s->width *= 2;
}

void qc_add(qc_stats *s, const float *x, size_t n) {
  double lo = s->n ? s->lo : INFINITY, hi = s->n ? s->hi : -INFINITY, amax = 0;
  size_t seen = 0;
  for (size_t i = 0; i < n; i++) {
    double v = x[i];
    if (v != v) continue;
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
    amax = fabs(v) > amax ? fabs(v) : amax;
    seen++;
  }
  if (!seen) return;
  s->lo = lo, s->hi = hi, s->n += seen;
  if (amax > 0 && s->width == 0) s->width = amax / QC_BINS * (1 + 1e-6);
  while (s->width > 0 && amax >= s->width * QC_BINS && isfinite(amax))
    widen(s);
  for (size_t i = 0; i < n; i++) {
    double a = fabs((double)x[i]);
    if (a != a) continue;
    double b = s->width > 0 ? a / s->width : 0;
    s->count[b >= QC_BINS - 1 ? QC_BINS - 1 : (int)b]++;
  }
}

double qc_percentile_threshold(const uint64_t *count, int nbins, double width, double pct) {
  double total = 0;
  for (int i = 0; i < nbins; i++)
    total += (double)count[i];
  double want = total * pct / 100, cum = 0;
  for (int i = 0; i < nbins; i++) {
    cum += (double)count[i];
    if (cum >= want && cum > 0) return (i + 1) * width;
  }
  return nbins * width;
}

/* KL(P || Q) for the first i bins clipped (see calib.h). p and q are
 * scratch of at least i doubles. */
static double clipped_kl(const uint64_t *count, int nbins, int i, int levels, double *p, double *q) {
  double outliers = 0;
  for (int j = i; j < nbins; j++)
    outliers += (double)count[j];
  for (int j = 0; j < i; j++)
    p[j] = (double)count[j], q[j] = 0;
  p[i - 1] += outliers;
  /* Q: the first i bins (unclipped) merged into `levels` groups, spread back
   * evenly over each group's nonzero bins. */
  int per = i / levels;
  for (int g = 0; g < levels; g++) {
    int start = g * per, end = g == levels - 1 ? i : start + per, nonzero = 0;
    double mass = 0;
    for (int j = start; j < end; j++) {
      mass += (double)count[j];
      nonzero += count[j] != 0;
    }
    for (int j = start; j < end && nonzero; j++)
      q[j] = count[j] ? mass / nonzero : 0;
  }
  double ps = 0, qs = 0;
  for (int j = 0; j < i; j++)
    ps += p[j], qs += q[j];
  if (ps <= 0 || qs <= 0) return INFINITY;
  double kl = 0;
  for (int j = 0; j < i; j++) {
    if (p[j] <= 0) continue;
    double pj = p[j] / ps, qj = q[j] > 0 ? q[j] / qs : 1e-12; /* the last bin may gain mass Q has not */
    kl += pj * log(pj / qj);
  }
  return kl;
}

double qc_entropy_threshold(const uint64_t *count, int nbins, double width, int levels) {
  if (nbins <= levels) return nbins * width;
  double p[QC_BINS], q[QC_BINS];
  if (nbins > QC_BINS) nbins = QC_BINS;
  double best = INFINITY;
  int at = nbins;
  for (int i = levels; i <= nbins; i++) {
    if (count[i - 1] == 0 && i < nbins) continue; /* a threshold inside an empty stretch adds nothing */
    double kl = clipped_kl(count, nbins, i, levels, p, q);
    if (kl < best) best = kl, at = i;
  }
  return at * width;
}

void qc_range(const qc_stats *s, qc_method m, double percentile, double *lo_out, double *hi_out) {
  double lo = s->n && s->lo < 0 ? s->lo : 0, hi = s->n && s->hi > 0 ? s->hi : 0;
  if (m != QC_MINMAX && s->width > 0) {
    /* uint8 gives [0, t] all 255 levels when nothing is negative, each side half of them otherwise */
    int levels = lo < 0 ? QC_LEVELS : 2 * QC_LEVELS - 1;
    double t = m == QC_PERCENTILE ? qc_percentile_threshold(s->count, QC_BINS, s->width, percentile)
                                  : qc_entropy_threshold(s->count, QC_BINS, s->width, levels);
    lo = lo < -t ? -t : lo;
    hi = hi > t ? t : hi;
  }
  *lo_out = lo, *hi_out = hi;
}

int qc_method_parse(const char *name) {
  static const char *const names[] = {"minmax", "percentile", "entropy"};
  for (int i = 0; i < 3; i++)
    if (!strcmp(name, names[i])) return i;
  return -1;
}

const char *qc_method_name(qc_method m) {
  return m == QC_MINMAX ? "minmax" : m == QC_PERCENTILE ? "percentile" : "entropy";
}
