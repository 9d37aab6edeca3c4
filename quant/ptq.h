/* ptq.h - post-training quantization of a float ONNX model to QDQ ONNX
 * (quant/ptq.c), the library behind omquant.
 *
 *   oq_open       reads the model (protobuf-c, for rewriting) and loads it
 *                 with the project's loader (for the reference evaluator),
 *                 plans what is quantized (quant/qdq.h)
 *   oq_calibrate  runs the float model on one sample with the reference
 *                 evaluator (ir/eval.h) and adds every planned tensor's
 *                 values to its statistics (quant/calib.h); the same as
 *   oq_run        (the run alone: it only reads the session, so several
 *                 may go at once, one sample each, on threads) followed by
 *   oq_take       (the statistics, in sample order: a histogram's bin
 *                 width follows the order the samples reach it in)
 *   oq_finish     ranges by the chosen method, then the QDQ model's bytes
 *   oq_compare    runs the float and the written QDQ model on one sample:
 *                 per tensor the cosine of the float values and the
 *                 fake-quantized ones (the QDQ model's DequantizeLinear
 *                 output), and of the graph's first output
 * The library does not print; the caller reports progress between calls.
 *
 * Ownership: an oq_session owns everything it holds (the model's bytes,
 * the unpacked model, the graph, the statistics, the written bytes) until
 * oq_close.
 */
#ifndef QUANT_PTQ_H
#define QUANT_PTQ_H

#include <stddef.h>
#include <stdint.h>

#include "frontend/onnx_import.h"
#include "quant/calib.h"
#include "quant/qdq.h"

typedef struct oq_session {
  const char *path; /* the model's path (borrowed) */
  void *file;       /* the model's bytes (malloc) */
  size_t file_bytes;
  Onnx__ModelProto *model; /* unpacked by protobuf-c */
  ir_graph *graph;         /* the float model, shapes inferred */
  arena a;                 /* plan, statistics, written bytes */
  oq_plan plan;
  qc_stats *stats;    /* one per plan.tensors entry */
  double *lo, *hi;    /* the ranges oq_finish chose */
  size_t input_bytes; /* one sample: the first graph input's bytes */
  int samples;        /* oq_calibrate calls so far */
  uint8_t *written;   /* oq_finish's model */
  size_t written_bytes;
} oq_session;

/* Opens the model at `path` (one graph input of any dtype: an image, token ids; shapes: its symbolic
 * dims fixed by `shapes`, else 1). skip: node names kept in float; every_op: oq_plan_make's. */
status oq_open(const char *path, const onnx_input_shape *shapes, int nshapes, const char *const *skip,
               int nskip, int every_op, oq_session **out, diag *d);
/* One calibration sample: input_bytes of the input, raw little-endian in its dtype. */
status oq_calibrate(oq_session *s, const void *input, diag *d);

/* A sample's run: every value of the graph (vals, indexed by value id) in
 * its own arena, owned until oq_run_free. */
typedef struct oq_sample {
  arena a;
  const void **vals;
} oq_sample;
/* Runs the model on input into *r (which oq_run_free frees, also on error).
 * Reads s only: safe on several threads at once. */
status oq_run(const oq_session *s, const void *input, oq_sample *r, diag *d);
/* Adds r's planned tensors to the statistics (one sample more). */
void oq_take(oq_session *s, const oq_sample *r);
void oq_run_free(oq_sample *r);
status oq_finish(oq_session *s, qc_method m, double percentile, diag *d);
/* cos_out: plan.ntensors cosines (NaN where a tensor was not computed);
 * *output_cos_out: the graph's first output. */
status oq_compare(oq_session *s, const void *input, double *cos_out, double *output_cos_out, diag *d);
void oq_close(oq_session *s);

#endif
