/* calibrate.h - --precision_calibration_input (driver/calibrate.c): the
 * nodes allow_mix_precision keeps in fp32, chosen from the error measured
 * on a sample input. Internal to the driver.
 */
#ifndef DRIVER_CALIBRATE_H
#define DRIVER_CALIBRATE_H

#include "common/arena.h"
#include "driver/compile.h"
#include "passes/pass.h"

/* atc_compile with the precision files already read (compile.c). */
status atc_compile_cfg(const atc_options *opt, const prec_cfg *prec, atc_result *res, diag *d);

/* Measures, compiling opt's model in memory (opt->calibration_input names
 * the sample), and appends to prec->keep (allocated from a) the source
 * nodes to keep in fp32, each with its figures as the entry's reason.
 * Reports each round through opt->on_note. */
status atc_calibrate(const atc_options *opt, prec_cfg *prec, arena *a, diag *d);

#endif
