/* The sgla command-line tool: one file per sub-command, this header between
 * them.  Each sub-command returns the process exit status:
 *   0 success;
 *   1 a runtime failure: an input file unreadable or inconsistent, the call
 *     refused by the library, a backend or device error, an output not
 *     written, a verification check that failed;
 *   2 a usage error: an unknown option, a missing or malformed value, options
 *     that contradict each other (found before any file is read);
 *   3 (verify) the levels asked for could not run (no CUDA device). */
#ifndef SGLA_CLI_H
#define SGLA_CLI_H

#include <stdint.h>
#include "sgla.h"

int sgla_cmd_verify(int argc, char **argv);  /* tools/cmd_verify.c */
int sgla_cmd_tables(int argc, char **argv);  /* tools/cmd_tables.c */
int sgla_cmd_run(int argc, char **argv);     /* tools/cmd_run.c */
int sgla_cmd_grad(int argc, char **argv);    /* tools/cmd_grad.c */
int sgla_cmd_plot(int argc, char **argv);    /* tools/cmd_plot.c */
int sgla_cmd_bench(int argc, char **argv);   /* tools/cmd_bench.c */

/* Strict parsers: the whole string must be a number; on failure print
 * "sgla <cmd>: <what>: '<s>' is not ..." to stderr and return 0. */
int cli_parse_i64(const char *cmd, const char *what, const char *s, int64_t *out);
int cli_parse_double(const char *cmd, const char *what, const char *s, double *out);
int cli_parse_u64(const char *cmd, const char *what, const char *s, uint64_t *out);
/* "ref-a".."ref-d", "cpu", "cuda", "auto". */
int cli_parse_backend(const char *cmd, const char *s, sgla_backend *out);
/* "f32", "f16", "bf16". */
int cli_parse_dtype(const char *cmd, const char *s, sgla_dtype *out);
/* "B,T,H,K,V" (or "B,T,H,D" meaning K = V = D). */
int cli_parse_shape(const char *cmd, const char *s, int64_t shape[5]);
/* The options of one command line that take one value: each may be given once,
 * since a second is more likely a slip than an override the user meant the
 * last one to win.  Zero-initialise; options that may repeat (bench --shape)
 * and flags without a value stay out of it. */
typedef struct cli_seen {
    const char *flag[64];
    int n;
} cli_seen;
/* 1 the first time flag is met (recorded in *seen), else 0 after
 * "sgla <cmd>: <flag> given twice". */
int cli_once(const char *cmd, cli_seen *seen, const char *flag);
/* The value after a flag: argv[*i + 1], advancing *i; NULL (with a message) if missing. */
const char *cli_value(const char *cmd, int argc, char **argv, int *i);
/* Wall-clock seconds (monotonic). */
double cli_now(void);

#endif
