/* calib.h - activation range calibration for post-training quantization
 * (quant/calib.c, used by omquant).
 *
 * One qc_stats per tensor collects, over every calibration sample, the
 * smallest and largest value and a histogram of |x| with QC_BINS bins of
 * equal width starting at 0. The width is set by the first sample that has
 * a nonzero value (its largest |x| falls in the last bin) and doubles, by
 * merging neighbouring bins, whenever a later sample reaches past the last
 * bin; counts are never re-estimated, so the result does not depend on how
 * the samples are split into calls (only on their order through the
 * doublings).
 *
 * From the statistics, a range [lo, hi] with lo <= 0 <= hi (the quantized
 * grid must hold 0 exactly) by one of:
 *   minmax      the values seen;
 *   percentile  |x| clipped at the given percentile of the histogram
 *               (99.99 keeps all but one value in 10,000);
 *   entropy     |x| clipped at the threshold whose quantization to
 *               QC_LEVELS levels (2 x QC_LEVELS - 1 for data with no
 *               negative value: uint8's whole range then covers [0, t])
 *               loses the least information: the
 *               Kullback-Leibler divergence of the clipped histogram P (the
 *               clipped mass added to its last bin) from its quantized
 *               copy Q (P's bins merged into QC_LEVELS groups, each group's
 *               mass spread evenly over its nonzero bins), minimised over
 *               thresholds of QC_LEVELS bins and up, as TensorRT's entropy
 *               calibration describes it.
 * A clipped range keeps the sign of the data: [max(lo, -t), min(hi, t)].
 */
#ifndef QUANT_CALIB_H
#define QUANT_CALIB_H

#include <stddef.h>
#include <stdint.h>

enum { QC_BINS = 2048, QC_LEVELS = 128 };

typedef enum qc_method { QC_MINMAX, QC_PERCENTILE, QC_ENTROPY } qc_method;

typedef struct qc_stats {
  double lo, hi;           /* smallest and largest value seen; 0 before any */
  double width;            /* bin width (value units), 0 until a nonzero |x| */
  uint64_t n;              /* values seen */
  uint64_t count[QC_BINS]; /* values with |x| in [i * width, (i + 1) * width) */
} qc_stats;

void qc_init(qc_stats *s);
/* Adds n values (NaNs are skipped). */
void qc_add(qc_stats *s, const float *x, size_t n);
/* The range by method m (percentile in (0, 100], for QC_PERCENTILE). */
void qc_range(const qc_stats *s, qc_method m, double percentile, double *lo_out, double *hi_out);
/* "minmax", "percentile", "entropy" -> the method; -1 for another name. */
int qc_method_parse(const char *name);
const char *qc_method_name(qc_method m);

/* The clipping thresholds on a histogram (bins of `width` from 0), exposed
 * for tests: the upper edge of the bin where the cumulative count first
 * reaches pct percent; and the entropy threshold over `levels` levels (the
 * histogram's whole range when it has at most `levels` bins). */
double qc_percentile_threshold(const uint64_t *count, int nbins, double width, double pct);
double qc_entropy_threshold(const uint64_t *count, int nbins, double width, int levels);

#endif
