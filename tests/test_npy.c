/* The .npy reader/writer (tools/npy.c): numpy's own files, round trips for
 * every dtype and rank 0-4, byte-identical output to numpy.save, and every
 * kind of malformed file getting an error that names the file and the
 * problem. */
#define _POSIX_C_SOURCE 200809L /* mkfifo */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npy.h"
#include "testutil.h"

#ifndef SGLA_TEST_DATA_DIR
#define SGLA_TEST_DATA_DIR "tests/data"
#endif

static const char *data_path(const char *name)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s/%s", SGLA_TEST_DATA_DIR, name);
    return buf;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
    *len = b ? fread(b, 1, (size_t)n, f) : 0;
    fclose(f);
    return b;
}

static double elem(const npy_array *a, int64_t i)
{
    switch (a->dtype) {
    case NPY_F16: return sgla_f16_to_f32(((const uint16_t *)a->data)[i]);
    case NPY_F32: return ((const float *)a->data)[i];
    case NPY_F64: return ((const double *)a->data)[i];
    case NPY_I32: return ((const int32_t *)a->data)[i];
    case NPY_I64: return (double)((const int64_t *)a->data)[i];
    }
    return 0;
}

/* A numpy fixture: dtype, shape, and element i == i*step + off. */
static void check_fixture(const char *name, npy_dtype dt, int ndim, const int64_t *shape, double step, double off)
{
    npy_array a;
    char err[512] = "";
    int rc = npy_read(data_path(name), &a, err, sizeof err);
    TU_CHECK(rc == 0, "%s: %s", name, err);
    if (rc) return;
    TU_CHECK(a.dtype == dt, "%s: dtype %d, want %d", name, (int)a.dtype, (int)dt);
    TU_CHECK(a.ndim == ndim, "%s: ndim %d, want %d", name, a.ndim, ndim);
    int64_t n = 1;
    for (int i = 0; i < ndim && i < a.ndim; i++) {
        TU_CHECK(a.shape[i] == shape[i], "%s: shape[%d] = %lld, want %lld", name, i, (long long)a.shape[i],
                 (long long)shape[i]);
        n *= shape[i];
    }
    TU_CHECK(a.count == n, "%s: count %lld, want %lld", name, (long long)a.count, (long long)n);
    int bad = 0;
    if (a.count == n && dt == a.dtype)
        for (int64_t i = 0; i < n; i++)
            if (elem(&a, i) != (double)i * step + off) bad++;
    TU_CHECK(bad == 0, "%s: %d elements differ from the ramp", name, bad);

    /* Our writer reproduces numpy's v1.0 file byte for byte. */
    size_t flen = 0;
    unsigned char *orig = slurp(data_path(name), &flen);
    if (orig && orig[6] == 1) {
        const char *tmp = "test_npy_rewrite.npy";
        rc = npy_write(tmp, a.dtype, a.ndim, a.shape, a.data, err, sizeof err);
        TU_CHECK(rc == 0, "%s: rewrite: %s", name, err);
        size_t len2 = 0;
        unsigned char *mine = slurp(tmp, &len2);
        TU_CHECK(mine && len2 == flen && !memcmp(mine, orig, flen), "%s: rewrite is not byte-identical to numpy's (%zu vs %zu bytes)",
                 name, len2, flen);
        free(mine);
        remove(tmp);
    }
    free(orig);
    npy_free(&a);
}

static void test_numpy_fixtures(void)
{
    int64_t s0[1] = {0}, s1[1] = {5}, s2[2] = {2, 3}, s3[3] = {2, 3, 4}, s4[4] = {2, 1, 3, 2}, se[2] = {0, 3},
            s32[2] = {3, 2}, si4[1] = {4}, sv3[1] = {4};
    check_fixture("np_f2_r0.npy", NPY_F16, 0, s0, 0.5, -1.0);
    check_fixture("np_f4_r1.npy", NPY_F32, 1, s1, 0.5, -1.0);
    check_fixture("np_f8_r2.npy", NPY_F64, 2, s2, 0.5, -1.0);
    check_fixture("np_i8_r3.npy", NPY_I64, 3, s3, 1.0, -5.0);
    check_fixture("np_i4_r1.npy", NPY_I32, 1, si4, 1.0, -1.0);
    check_fixture("np_f4_r4.npy", NPY_F32, 4, s4, 0.5, -1.0);
    check_fixture("np_f4_empty.npy", NPY_F32, 2, se, 0.5, -1.0);
    check_fixture("np_f4_v2.npy", NPY_F32, 2, s32, 0.5, -1.0);
    check_fixture("np_f8_v3.npy", NPY_F64, 1, sv3, 0.5, -1.0);
}

/* Round trip through a file and through npy_parse, every dtype, rank 0-4. */
static void test_round_trips(void)
{
    static const npy_dtype dts[] = {NPY_F16, NPY_F32, NPY_F64, NPY_I32, NPY_I64};
    static const int64_t dims[4][4] = {{3, 0, 0, 0}, {2, 5, 0, 0}, {1, 4, 3, 0}, {2, 3, 1, 5}};
    const char *tmp = "test_npy_roundtrip.npy";
    char err[512];
    for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++)
        for (int rank = 0; rank <= 4; rank++)
            for (int zero = 0; zero < 2; zero++) {
                if (zero && rank == 0) continue;
                int64_t shape[4] = {0, 0, 0, 0};
                for (int i = 0; i < rank; i++) shape[i] = dims[rank - 1][i];
                if (zero) shape[rank - 1] = 0; /* an empty array of that rank */
                int64_t n = 1;
                for (int i = 0; i < rank; i++) n *= shape[i];
                size_t es = npy_dtype_size(dts[t]);
                unsigned char *src = malloc((size_t)(n ? n : 1) * es);
                for (int64_t i = 0; i < (int64_t)(n * (int64_t)es); i++) src[i] = (unsigned char)(i * 37 + 11 + t);
                int rc = npy_write(tmp, dts[t], rank, shape, src, err, sizeof err);
                TU_CHECK(rc == 0, "write %s rank %d: %s", npy_dtype_descr(dts[t]), rank, err);
                npy_array a;
                rc = npy_read(tmp, &a, err, sizeof err);
                TU_CHECK(rc == 0, "read %s rank %d: %s", npy_dtype_descr(dts[t]), rank, err);
                if (rc == 0) {
                    int same = a.dtype == dts[t] && a.ndim == rank && a.count == n;
                    for (int i = 0; same && i < rank; i++) same = a.shape[i] == shape[i];
                    if (same && n) same = !memcmp(a.data, src, (size_t)n * es);
                    TU_CHECK(same, "round trip %s rank %d%s differs", npy_dtype_descr(dts[t]), rank, zero ? " (empty)" : "");
                    npy_free(&a);
                }
                /* The header is 64-byte aligned, as numpy.save makes it. */
                size_t flen = 0;
                unsigned char *img = slurp(tmp, &flen);
                TU_CHECK(img && (flen - (size_t)n * es) % 64 == 0, "header of %s rank %d is not 64-byte aligned",
                         npy_dtype_descr(dts[t]), rank);
                if (img) {
                    rc = npy_parse("mem", img, flen, &a, err, sizeof err);
                    TU_CHECK(rc == 0 && a.count == n && (!n || !memcmp(a.data, src, (size_t)n * es)),
                             "npy_parse %s rank %d: %s", npy_dtype_descr(dts[t]), rank, rc ? err : "differs");
                    if (rc == 0) npy_free(&a);
                }
                free(img);
                free(src);
            }
    remove(tmp);
}

/* Build a .npy image by hand: version, dict text, then nbytes of data. */
static size_t make_npy(unsigned char *buf, int major, const char *dict, size_t nbytes)
{
    size_t pre = major == 1 ? 10 : 12, dl = strlen(dict);
    size_t hlen = dl + 1;
    size_t pad = (64 - (pre + hlen) % 64) % 64;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    uint32_t h = (uint32_t)(hlen + pad);
    buf[8] = (unsigned char)(h & 0xff);
    buf[9] = (unsigned char)(h >> 8);
    if (major != 1) {
        buf[10] = (unsigned char)(h >> 16);
        buf[11] = (unsigned char)(h >> 24);
    }
    memcpy(buf + pre, dict, dl);
    memset(buf + pre + dl, ' ', pad);
    buf[pre + dl + pad] = '\n';
    size_t total = pre + hlen + pad;
    for (size_t i = 0; i < nbytes; i++) buf[total + i] = (unsigned char)i;
    return total + nbytes;
}

static unsigned char img[1 << 16];

/* Parses; on success checks rank and count. */
static void accept(const char *what, int major, const char *dict, size_t nbytes, int ndim, int64_t count)
{
    size_t n = make_npy(img, major, dict, nbytes);
    npy_array a;
    char err[512] = "";
    int rc = npy_parse(what, img, n, &a, err, sizeof err);
    TU_CHECK(rc == 0, "%s: should parse: %s", what, err);
    if (rc == 0) {
        TU_CHECK(a.ndim == ndim && a.count == count, "%s: ndim %d count %lld, want %d %lld", what, a.ndim,
                 (long long)a.count, ndim, (long long)count);
        npy_free(&a);
    }
}

/* Must fail with a message naming the file and containing `needle`; the
 * same image written to disk must fail the same way through npy_read. */
static void reject_image(const char *what, const unsigned char *buf, size_t n, const char *needle)
{
    npy_array a;
    char err[512] = "";
    int rc = npy_parse("bad.npy", buf, n, &a, err, sizeof err);
    TU_CHECK(rc != 0, "%s: parsed but should fail", what);
    TU_CHECK(a.data == NULL, "%s: data left allocated on failure", what);
    TU_CHECK(strstr(err, "bad.npy") && strstr(err, needle), "%s: message '%s' lacks the file name or '%s'", what,
             err, needle);
    if (rc == 0) npy_free(&a);

    const char *path = "test_npy_bad.npy";
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(buf, 1, n, f);
        fclose(f);
    }
    err[0] = '\0';
    rc = npy_read(path, &a, err, sizeof err);
    TU_CHECK(rc != 0 && strstr(err, path) && strstr(err, needle), "%s: npy_read: rc %d, message '%s'", what, rc, err);
    if (rc == 0) npy_free(&a);
    remove(path);
}

static void reject(const char *what, int major, const char *dict, size_t nbytes, const char *needle)
{
    size_t n = make_npy(img, major, dict, nbytes);
    reject_image(what, img, n, needle);
}

static void test_header_variants(void)
{
    /* What numpy writes, and legal variations of it. */
    accept("numpy v1", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24, 2, 6);
    accept("v2 header", 2, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 24, 1, 3);
    accept("v3 header", 3, "{'descr': '<i8', 'fortran_order': False, 'shape': (), }", 8, 0, 1);
    accept("key order", 1, "{'shape': (4,), 'fortran_order': False, 'descr': '<f2'}", 8, 1, 4);
    accept("double quotes", 1, "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (1, 1)}", 4, 2, 1);
    accept("spacing", 1, "{ 'descr' : '<f4' ,'fortran_order':False,'shape':( 2 , 2 , ) }", 16, 2, 4);
    accept("python2 long", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 1L), }", 8, 2, 2);
    accept("zero extent", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 99), }", 0, 2, 0);
}

static void test_malformed(void)
{
    unsigned char b[256];
    size_t n;

    /* preamble */
    n = make_npy(b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4);
    b[1] = 'X';
    reject_image("bad magic", b, n, "bad magic");
    reject_image("text file", (const unsigned char *)"hello world, not numpy", 22, "bad magic");
    reject_image("empty file", b, 0, "truncated");
    n = make_npy(b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4);
    reject_image("truncated preamble", b, 7, "truncated");
    reject_image("truncated header length", b, 9, "truncated");
    reject_image("truncated header", b, 40, "truncated header");
    reject_image("truncated data", b, n - 1, "truncated data");
    b[6] = 4;
    reject_image("version 4.0", b, n, "version 4.0");
    b[6] = 1;
    b[7] = 1;
    reject_image("version 1.1", b, n, "version 1.1");
    n = make_npy(b, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4);
    b[11] = 0x7f;
    reject_image("huge header length", b, n, "implausibly large");

    /* sizes */
    reject("extra data", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 12, "extra data");
    reject("shape/size mismatch", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 40, "truncated data");
    reject("absurd shape", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 1000000000), }", 16,
           "truncated data");
    reject("overflowing shape", 1,
           "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4611686018427387904), }", 16,
           "too large");
    reject("byte size overflow", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,), }", 16,
           "too large");
    reject("dimension beyond int64", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
           4, "64 bits");
    reject("17 dimensions", 1,
           "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1), }", 4,
           "dimensions");

    /* dtype and order */
    reject("fortran order", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16, "Fortran");
    reject("big-endian", 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8, "big-endian");
    reject("complex", 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16, "unsupported dtype '<c8'");
    reject("int16", 1, "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }", 4, "unsupported dtype");
    reject("object", 1, "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 16, "unsupported dtype");
    reject("structured", 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8, "structured");
    reject("native order", 1, "{'descr': '=f4', 'fortran_order': False, 'shape': (2,), }", 8, "byte order");

    /* dict syntax */
    reject("not a dict", 1, "['descr', '<f4']", 0, "dict");
    reject("missing shape", 1, "{'descr': '<f4', 'fortran_order': False, }", 0, "missing 'shape'");
    reject("missing descr", 1, "{'fortran_order': False, 'shape': (2,), }", 8, "missing 'descr'");
    reject("missing fortran_order", 1, "{'descr': '<f4', 'shape': (2,), }", 8, "missing 'fortran_order'");
    reject("duplicate key", 1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8,
           "duplicate");
    reject("unknown key", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1, }", 8,
           "unexpected key 'extra'");
    reject("shape not a tuple", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", 8, "not a tuple");
    reject("shape a list", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': [2], }", 8, "not a tuple");
    reject("negative dimension", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 8,
           "non-negative");
    reject("float dimension", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,), }", 8, "expected ','");
    reject("fortran_order 0", 1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", 8, "True or False");
    reject("Falsey", 1, "{'descr': '<f4', 'fortran_order': Falsey, 'shape': (2,), }", 8, "True or False");
    reject("unterminated dict", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", 8, "expected ','");
    reject("text after dict", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } junk", 8,
           "after the dict");
    reject("empty descr", 1, "{'descr': '', 'fortran_order': False, 'shape': (2,), }", 8, "descr");
    {
        /* a NUL inside the header (numpy pads with spaces, never NUL) */
        n = make_npy(b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4);
        b[10 + 60] = '\0';
        reject_image("NUL in header", b, n, "NUL");
    }
}

static void test_numpy_refusals(void)
{
    static const struct { const char *file, *needle; } cases[] = {
        {"np_fortran.npy", "Fortran"}, {"np_big_endian.npy", "big-endian"}, {"np_u1.npy", "unsupported dtype '|u1'"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        npy_array a;
        char err[512] = "";
        const char *p = data_path(cases[i].file);
        int rc = npy_read(p, &a, err, sizeof err);
        TU_CHECK(rc != 0 && strstr(err, cases[i].file) && strstr(err, cases[i].needle), "%s: rc %d, message '%s'",
                 cases[i].file, rc, err);
        if (rc == 0) npy_free(&a);
    }
    npy_array a;
    char err[512] = "";
    int rc = npy_read("no/such/file.npy", &a, err, sizeof err);
    TU_CHECK(rc != 0 && strstr(err, "no/such/file.npy") && strstr(err, "cannot open"), "missing file: '%s'", err);
    rc = npy_read(SGLA_TEST_DATA_DIR, &a, err, sizeof err);
    TU_CHECK(rc != 0 && strstr(err, "not a regular file"), "directory: '%s'", err);
    rc = npy_write("no/such/dir/out.npy", NPY_F32, 0, NULL, "\0\0\0\0", err, sizeof err);
    TU_CHECK(rc != 0 && strstr(err, "no/such/dir/out.npy") && strstr(err, "cannot create"), "unwritable: '%s'", err);
    /* a FIFO (like /dev/null, a node that is not a regular file) is refused, and stays a FIFO:
     * the rename would have replaced it with a regular file */
    const char *fifo = "test_npy_fifo.npy";
    unlink(fifo);
    if (mkfifo(fifo, 0600) == 0) {
        struct stat st;
        rc = npy_write(fifo, NPY_F32, 0, NULL, "\0\0\0\0", err, sizeof err);
        TU_CHECK(rc != 0 && strstr(err, "not a regular file"), "FIFO target: rc %d, '%s'", rc, err);
        TU_CHECK(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "FIFO target was replaced");
        unlink(fifo);
    }
}

static void test_header_format(void)
{
    /* v2.0 only when v1.0's 16-bit length cannot hold the header: never for
     * 16 dimensions, so check the threshold through the formatter's sizes. */
    unsigned char h[1024];
    int64_t shape[NPY_MAX_DIMS];
    for (int i = 0; i < NPY_MAX_DIMS; i++) shape[i] = INT64_MAX / ((int64_t)1 << 62) + 1;
    size_t n = npy_format_header(NPY_F64, NPY_MAX_DIMS, shape, h, sizeof h);
    TU_CHECK(n > 0 && n % 64 == 0 && h[6] == 1 && h[n - 1] == '\n', "16-dim header: len %zu version %d", n, h[6]);
    TU_CHECK(npy_format_header(NPY_F32, 2, shape, h, 10) == 0, "a too-small buffer must be refused");
    int64_t neg[1] = {-1};
    TU_CHECK(npy_format_header(NPY_F32, 1, neg, h, sizeof h) == 0, "a negative extent must be refused");
    char s[64];
    npy_shape_str(0, NULL, s, sizeof s);
    TU_CHECK(!strcmp(s, "()"), "scalar shape '%s'", s);
    npy_shape_str(1, shape, s, sizeof s);
    TU_CHECK(!strcmp(s, "(2,)"), "1-d shape '%s'", s);
}

int main(void)
{
    test_numpy_fixtures();
    test_round_trips();
    test_header_variants();
    test_malformed();
    test_numpy_refusals();
    test_header_format();
    return tu_finish("test_npy");
}
