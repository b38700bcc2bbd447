/*
 * npy.h — a small reader and writer for NumPy's .npy format (v1.0, v2.0;
 * v3.0 read), enough for sgla's inputs and outputs: little-endian f2, f4, f8,
 * i4, i8 arrays in C order.
 *
 * Every function returns 0 on success and -1 on failure, with a one-line
 * message naming the file and the problem in err (never printed here).
 */
#ifndef SGLA_NPY_H
#define SGLA_NPY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* numpy allows 64 dimensions; sgla never needs more than 4, so 16 is ample
 * and keeps the struct small. */
#define NPY_MAX_DIMS 16

typedef enum npy_dtype {
    NPY_F16 = 0, /* '<f2' */
    NPY_F32 = 1, /* '<f4' */
    NPY_F64 = 2, /* '<f8' */
    NPY_I32 = 3, /* '<i4' */
    NPY_I64 = 4  /* '<i8' */
} npy_dtype;

typedef struct npy_array {
    npy_dtype dtype;
    int ndim;                     /* 0 for a scalar */
    int64_t shape[NPY_MAX_DIMS];
    int64_t count;                /* product of shape (1 for a scalar) */
    void *data;                   /* count elements, native byte order; free with npy_free */
} npy_array;

/* Bytes per element (0 for an unknown dtype), and numpy's descr ("<f4"). */
size_t npy_dtype_size(npy_dtype dt);
const char *npy_dtype_descr(npy_dtype dt);

/* Read a whole file.  On failure *out is left empty (data NULL). */
int npy_read(const char *path, npy_array *out, char *err, size_t errlen);

/* Parse a complete .npy image held in memory; `name` is used in messages. */
int npy_parse(const char *name, const unsigned char *buf, size_t len, npy_array *out,
              char *err, size_t errlen);

/* Write data (count = product of shape elements, native byte order) as a
 * .npy file in the layout numpy.save produces: v1.0 unless the header needs
 * v2.0, header padded so the data starts at a multiple of 64 bytes.  The
 * file is written beside the target and renamed over it when complete: a
 * failed write leaves the target as it was (and removes only its own
 * temporary file). */
int npy_write(const char *path, npy_dtype dt, int ndim, const int64_t *shape, const void *data,
              char *err, size_t errlen);

/* A new file beside path (path.tmp-XXXXXX, the mode fopen would give), open for writing, its name
 * in *tmp (free it); NULL with a message.  The outputs here and sgla plot's pictures are written
 * there and renamed over path when complete, so a failed write leaves path as it was. */
FILE *npy_temp_beside(const char *path, char **tmp, char *err, size_t errlen);

/* Several outputs as one: each npy_outputs_add writes a temporary file beside
 * its target; npy_outputs_commit renames them all into place (so an error in
 * any output, before the commit, leaves every target untouched), keeping each
 * existing target beside it until all are in place (a rename refused midway
 * puts back those already replaced); npy_outputs_abort removes the temporary
 * files.  Both free the set. */
#define NPY_MAX_OUTPUTS 8
typedef struct npy_outputs {
    int n;
    char *tmp[NPY_MAX_OUTPUTS];
    const char *dst[NPY_MAX_OUTPUTS];
} npy_outputs;
int npy_outputs_add(npy_outputs *s, const char *path, npy_dtype dt, int ndim, const int64_t *shape,
                    const void *data, char *err, size_t errlen);
int npy_outputs_commit(npy_outputs *s, char *err, size_t errlen);
void npy_outputs_abort(npy_outputs *s);

/* 1 when a and b name the same file: the same device and inode when both
 * exist, else the same canonical directory and name; 0 otherwise. */
int npy_same_file(const char *a, const char *b);

/* The header numpy.save would write (magic through the final '\n') into buf;
 * returns its length, or 0 if buf is too small or the shape is invalid. */
size_t npy_format_header(npy_dtype dt, int ndim, const int64_t *shape, unsigned char *buf, size_t cap);

/* Product of shape with overflow check: 0 on overflow or a negative extent. */
int npy_shape_count(int ndim, const int64_t *shape, int64_t *count);

void npy_free(npy_array *a);

/* "(2, 3, 4)" — the shape as numpy prints it, for messages. */
void npy_shape_str(int ndim, const int64_t *shape, char *buf, size_t cap);

#endif
