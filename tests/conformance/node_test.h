/* node_test.h - one ONNX node test, run in process: bind, compile, execute, compare.
 *
 * An ONNX node test is a directory holding model.onnx and
 * test_data_set_0/{input,output}_N.pb (serialized TensorProtos; input_N is
 * the N-th graph input that is not an initializer, output_N the N-th graph
 * output). nt_run compiles the model through the atc library (no files, no
 * subprocess), loads the package with libomrt from memory, runs it on the
 * test's inputs and compares every output with the test's tolerance.
 *
 * Inputs that an op needs at compile time (a Reshape's shape, Slice's
 * starts/ends, TopK's k, ...: the table nt_const_slots in node_test.c) are
 * bound as constants first: the ModelProto is rewritten so that graph input
 * becomes an initializer holding the test's data. Every other input stays a
 * run-time input.
 *
 * Both functions may crash or hang on a compiler or runtime bug; the
 * conformance runner calls them in a forked child with a timeout.
 */
#ifndef TESTS_CONFORMANCE_NODE_TEST_H
#define TESTS_CONFORMANCE_NODE_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "common/om_format.h"

/* What the report says about a test; from its model.onnx. */
typedef struct nt_meta {
  char op[64];      /* the ONNX operator the test counts toward ("?" when unknown) */
  char domain[64];  /* the op's domain, "ai.onnx" for the default one */
  int opset;        /* the opset of the op's domain the model imports (0: unknown) */
  char dtypes[128]; /* element types of graph inputs and outputs: "float32,int64" */
  int expanded;     /* a *_expanded test: the op's function body, in primitive ops */
} nt_meta;

/* Float comparison: |got - expected| <= atol + rtol * |expected|. Integer and
 * bool outputs are always compared exactly. */
typedef struct nt_tolerance {
  double rtol, atol;
} nt_tolerance;

/* The tolerance for floating-point outputs in a precision mode. */
nt_tolerance nt_tolerance_for(om_precision mode);
/* The tolerance for outputs of a storage dtype (common/types.h): exact for
 * float8 / float4 / e8m0 codes, at least 2^-7 relative for bf16 (else
 * `mode_tol`). */
nt_tolerance nt_tolerance_storage(int dtype, nt_tolerance mode_tol);

/* Fills `out` for test directory `root`/`test`. An expanded test counts
 * toward the op of its un-expanded twin (`test` with "_expanded..." cut). */
void nt_describe(const char *root, const char *test, nt_meta *out);

/* Runs the test in `dir` compiled with precision `mode`; the runtime uses
 * `threads` worker threads (0: its default). Returns 0 when every output is
 * within tolerance, else 1 with a one-line reason in `reason` (the compiler's
 * own message when the model does not compile). With `dir` "." (the runner
 * runs each test in its directory) messages name "test_data_set_0/input_0.pb"
 * without the directory. When the package ran, *digest_out (if not NULL)
 * is the CRC-32C of every output's bytes in order, pass or fail (a
 * refactor that must not change results compares these), else 0. */
int nt_run(const char *dir, om_precision mode, unsigned threads, char *reason, size_t reason_size,
           uint32_t *digest_out);

#endif
