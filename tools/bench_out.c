/* `sgla bench --format table|csv|json`: the rows as a table (what the bench
 * prints itself), as CSV with a header line, or as one JSON array of objects.
 * In csv and json the informational lines go to stderr, so that stdout is
 * the data alone. */
#include <math.h>
#include <stdio.h>

#include "bench.h"

static int rows_out = 0;

FILE *bench_info(const bench_args *a) { return a->format == BENCH_TABLE ? stdout : stderr; }

void bench_out_begin(const bench_args *a)
{
    rows_out = 0;
    if (a->format == BENCH_JSON) printf("[");
}

void bench_out_end(const bench_args *a)
{
    if (a->format == BENCH_JSON) printf("%s]\n", rows_out ? "\n" : "");
    fflush(stdout);
}

static const char *const keys[] = {"backend", "B",     "T",      "H",     "K",        "V",       "nseq",    "dtype",
                                   "gate",    "pass",  "ms",     "min_ms", "cpu_ms",  "gflops",  "peak_pct",
                                   "row",     "nseg",  "gbs",    "floor_ms", "x_floor", "workspace_mb", "check"};
enum { NKEYS = (int)(sizeof keys / sizeof keys[0]) };

/* a number, or an empty CSV field / JSON null when it is not known (NaN) */
static void num(const bench_args *a, double x)
{
    if (isnan(x)) printf("%s", a->format == BENCH_JSON ? "null" : "");
    else printf("%.6g", x);
}

static void str(const bench_args *a, const char *s)
{
    if (a->format == BENCH_JSON) printf("\"%s\"", s ? s : "");
    else printf("%s", s ? s : "");
}

void bench_out_row(const bench_args *a, const bench_record *r)
{
    if (a->format == BENCH_TABLE) return;
    if (a->format == BENCH_CSV && rows_out == 0)
        for (int i = 0; i < NKEYS; i++) printf("%s%s", keys[i], i + 1 < NKEYS ? "," : "\n");
    if (a->format == BENCH_JSON) printf("%s\n  {", rows_out ? "," : "");
    const double nums[] = {(double)r->B, (double)r->T, (double)r->H, (double)r->K, (double)r->V};
    for (int i = 0; i < NKEYS; i++) {
        if (a->format == BENCH_JSON) printf("%s\"%s\": ", i ? ", " : "", keys[i]);
        else if (i) printf(",");
        switch (i) {
        case 0: str(a, r->backend); break;
        case 1: case 2: case 3: case 4: case 5: num(a, nums[i - 1]); break;
        case 6: num(a, r->nseq ? (double)r->nseq : NAN); break;
        case 7: str(a, r->dtype); break;
        case 8: str(a, r->gate); break;
        case 9: str(a, r->pass); break;
        case 10: num(a, r->ms); break;
        case 11: num(a, r->min_ms); break;
        case 12: num(a, r->cpu_ms); break;
        case 13: num(a, r->gflops); break;
        case 14: num(a, r->peak_pct); break;
        case 15: num(a, r->row); break;
        case 16: num(a, r->nseg); break;
        case 17: num(a, r->gbs); break;
        case 18: num(a, r->floor_ms); break;
        case 19: num(a, r->x_floor); break;
        case 20: num(a, r->workspace_mb); break;
        default: str(a, r->check); break;
        }
    }
    printf(a->format == BENCH_JSON ? "}" : "\n");
    rows_out++;
    fflush(stdout);
}

bench_record bench_record_init(const char *backend, const int64_t sh[5], const char *dtype, const char *gate,
                               const char *pass)
{
    bench_record r;
    r.backend = backend, r.dtype = dtype, r.gate = gate, r.pass = pass, r.check = "";
    r.B = sh[0], r.T = sh[1], r.H = sh[2], r.K = sh[3], r.V = sh[4], r.nseq = 0;
    r.ms = r.min_ms = r.cpu_ms = r.gflops = r.peak_pct = r.row = r.nseg = r.gbs = r.floor_ms = r.x_floor =
        r.workspace_mb = NAN;
    return r;
}
