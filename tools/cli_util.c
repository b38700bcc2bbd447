#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* strtoll, strtoull and strtod skip leading white space (" 64" read as 64)
 * and stop at trailing white space: the number must be the whole argument,
 * and a stray space, a quoting slip, gets a message of its own.  1 after
 * the message. */
static int spaced(const char *cmd, const char *what, const char *s)
{
    const size_t n = strlen(s);
    if (!n || !(isspace((unsigned char)s[0]) || isspace((unsigned char)s[n - 1]))) return 0;
    fprintf(stderr, "sgla %s: %s: '%s' has white space around the number\n", cmd, what, s);
    return 1;
}

int cli_parse_i64(const char *cmd, const char *what, const char *s, int64_t *out)
{
    if (spaced(cmd, what, s)) return 0;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno) {
        fprintf(stderr, "sgla %s: %s: '%s' is not an integer\n", cmd, what, s);
        return 0;
    }
    *out = v;
    return 1;
}

int cli_parse_u64(const char *cmd, const char *what, const char *s, uint64_t *out)
{
    if (spaced(cmd, what, s)) return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || errno || s[0] == '-') {
        fprintf(stderr, "sgla %s: %s: '%s' is not a non-negative integer\n", cmd, what, s);
        return 0;
    }
    *out = v;
    return 1;
}

int cli_parse_double(const char *cmd, const char *what, const char *s, double *out)
{
    if (spaced(cmd, what, s)) return 0;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end) {
        fprintf(stderr, "sgla %s: %s: '%s' is not a number\n", cmd, what, s);
        return 0;
    }
    if (errno == ERANGE && fabs(v) > 1.0) { /* underflow to a subnormal or 0 is fine */
        fprintf(stderr, "sgla %s: %s: '%s' is out of range for a double\n", cmd, what, s);
        return 0;
    }
    *out = v;
    return 1;
}

int cli_parse_backend(const char *cmd, const char *s, sgla_backend *out)
{
    static const sgla_backend all[] = {SGLA_BACKEND_AUTO,  SGLA_BACKEND_REF_A, SGLA_BACKEND_REF_B,
                                       SGLA_BACKEND_REF_C, SGLA_BACKEND_REF_D, SGLA_BACKEND_CPU,
                                       SGLA_BACKEND_CUDA};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (!strcmp(s, sgla_backend_name(all[i]))) {
            *out = all[i];
            return 1;
        }
    fprintf(stderr, "sgla %s: --backend: '%s' is not one of auto, ref-a, ref-b, ref-c, ref-d, cpu, cuda\n", cmd, s);
    return 0;
}

int cli_parse_dtype(const char *cmd, const char *s, sgla_dtype *out)
{
    if (!strcmp(s, "f32") || !strcmp(s, "fp32")) *out = SGLA_F32;
    else if (!strcmp(s, "f16") || !strcmp(s, "fp16")) *out = SGLA_F16;
    else if (!strcmp(s, "bf16")) *out = SGLA_BF16;
    else {
        fprintf(stderr, "sgla %s: --dtype: '%s' is not one of f32, f16, bf16\n", cmd, s);
        return 0;
    }
    return 1;
}

int cli_parse_shape(const char *cmd, const char *s, int64_t shape[5])
{
    int64_t v[5];
    int n = 0;
    const char *p = s;
    /* strtoll would take " 2" in any field */
    for (const char *c = s; *c; c++)
        if (isspace((unsigned char)*c)) {
            fprintf(stderr, "sgla %s: --shape: '%s' has white space: give B,T,H,K,V without spaces\n", cmd, s);
            return 0;
        }
    while (n < 5) {
        char *end;
        errno = 0;
        long long x = strtoll(p, &end, 10);
        if (end == p || errno || x < 0) break;
        v[n++] = x;
        if (*end == ',') p = end + 1;
        else { p = end; break; }
    }
    if (*p || (n != 4 && n != 5) || s[strlen(s) - 1] == ',') { /* (a trailing comma read as the end) */
        fprintf(stderr, "sgla %s: --shape: '%s' is not B,T,H,K,V or B,T,H,D\n", cmd, s);
        return 0;
    }
    for (int i = 0; i < 4; i++) shape[i] = v[i];
    shape[4] = n == 5 ? v[4] : v[3];
    return 1;
}

int cli_once(const char *cmd, cli_seen *seen, const char *flag)
{
    for (int i = 0; i < seen->n; i++)
        if (!strcmp(seen->flag[i], flag)) {
            fprintf(stderr, "sgla %s: %s given twice\n", cmd, flag);
            return 0;
        }
    /* a command has fewer single-valued options than slots; were it not
     * so, the rest would go unchecked rather than refused */
    if (seen->n < (int)(sizeof seen->flag / sizeof seen->flag[0])) seen->flag[seen->n++] = flag;
    return 1;
}

const char *cli_value(const char *cmd, int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "sgla %s: %s needs a value\n", cmd, argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
