/* What `sgla run` and `sgla grad` share: the forward's inputs as .npy files
 * (their flags, loading, shape and dtype checks) and the messages. */
#ifndef SGLA_CLI_INPUTS_H
#define SGLA_CLI_INPUTS_H

#include <stdint.h>

#include "npy.h"
#include "sgla.h"

/* "sgla <cmd>: <message>" on stderr; returns 2. */
int cli_err(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Read a .npy file of rank ndim (0, or 2 after a message). */
int cli_npy_load(const char *cmd, const char *flag, const char *path, int ndim, npy_array *a);
/* An f8 array to f4 in place; f4 passes; anything else is an error. */
int cli_npy_f32(const char *cmd, const char *flag, const char *path, npy_array *a, int gate);
int cli_shape_eq(const npy_array *a, const int64_t *want, int n);
int cli_shape_err(const char *cmd, const char *flag, const char *path, const npy_array *a, int n,
                  const int64_t *want, const char *why);

/* A library error as one line: "sgla <cmd>: <what>: <status> (<detail>)"; returns 2. */
int cli_lib_err(const char *cmd, const char *what, sgla_status st);

#ifdef SGLA_HAVE_CUDA
/* n host buffers to new device buffers: dev[i] is a copy of host[i]
 * (bytes[i]), or left NULL when host[i] is NULL or bytes[i] is 0; with
 * host NULL, new uncopied buffers of bytes[i] (outputs).  NULL on success,
 * else the CUDA error's text; the caller frees dev[] with cli_cuda_free
 * either way. */
const char *cli_cuda_upload(int n, const void *const *host, const size_t *bytes, void **dev);
/* dev[i] (bytes[i]) into host[i] where both are set; NULL or the error's text. */
const char *cli_cuda_download(int n, void *const *host, void *const *dev, const size_t *bytes);
void cli_cuda_free(int n, void **dev);
#endif

/* The forward's input flags. */
typedef struct cli_input_args {
    const char *q, *k, *v, *g, *gg, *h0, *cu;
    int have_alpha;
    double alpha;
    double scale;
    int64_t chunk;
    int64_t threads;
    sgla_backend backend;
    unsigned flags; /* SGLA_FLAG_CHECK_FINITE with --check-finite */
} cli_input_args;

/* A command line of the forward's input flags and n file flags (slots start
 * NULL): defaults first, --help / -h sets *help and stops, anything else is an
 * error; then the input flags' own checks.  0, or 2 after a message. */
int cli_parse_files(const char *cmd, int argc, char **argv, cli_input_args *in, int n, const char *const *flags,
                    const char **const *slots, int *help);

/* The output files (n of them, NULL where not asked for) against each other
 * and against every input file (the forward's and nextra more), by file
 * identity, not by spelling; 0, or 2 after a message. */
int cli_outputs_check(const char *cmd, const cli_input_args *a, int n, const char *const *flags,
                      const char *const *paths, int nextra, const char *const *extra_flags,
                      const char *const *extra_paths);

/* The inputs, loaded and owned. */
typedef struct cli_inputs {
    npy_array q, k, v, g, gg, h0, cu;
    float *alpha_gg;
    npy_dtype in_dt;   /* of q, k, v in their files */
    sgla_dtype dt;     /* what the library computes with */
    int64_t B, T, H, K, V, N;
} cli_inputs;

/* Load and check every input, and fill d (o, ht unset); 0, or 2 after a message. */
int cli_inputs_load(const char *cmd, const cli_input_args *a, cli_inputs *r, sgla_forward_desc *d);
void cli_inputs_free(cli_inputs *r);

#endif
