/* npy.h - float32 NumPy .npy files (format 1.0), for layer dumps and
 * omcompare's golden tensors (tools/npy.c). Little-endian hosts only, as
 * the rest of the project. */
#ifndef TOOLS_NPY_H
#define TOOLS_NPY_H

#include <stddef.h>
#include <stdint.h>

enum { NPY_MAX_RANK = 8 };

/* Writes data[product of dims] as a C-order '<f4' array. 0 ok, -1 on an I/O
 * error (errno set). */
int npy_write_f32(const char *path, int rank, const int64_t *dims, const float *data);

/* Reads a C-order .npy array of '<f4', '<f2', '<f8', '<i8', '<i4', '|u1',
 * '|i1' or '|b1' as float32: *data_out malloc'd (free()), its dims in
 * dims_out. Returns 0, or -1 with a message in err (errno-free: the file is
 * missing, not .npy, Fortran order, an unsupported dtype, truncated). */
int npy_read_f32(const char *path, int *rank_out, int64_t dims_out[NPY_MAX_RANK], float **data_out, char *err,
                 size_t err_len);

/* A tensor name as a file name: characters outside [A-Za-z0-9._-] become
 * '_' (ONNX names such as "/layer1/Conv_output_0"). */
void npy_file_name(const char *tensor, char *buf, size_t n);

#endif
