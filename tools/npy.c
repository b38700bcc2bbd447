/*
 * npy.c — NumPy .npy reader and writer (see npy.h).
 *
 * Layout: "\x93NUMPY", major, minor, header length (uint16 LE for v1,
 * uint32 LE for v2/v3), then a Python dict literal
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and ending in '\n', then the raw data.  The parser
 * accepts any key order and any whitespace between tokens, but nothing that
 * numpy itself would not produce: exactly the three keys, a string descr, a
 * literal True/False and a tuple of non-negative integers.
 */
#define _XOPEN_SOURCE 700 /* POSIX 2008 plus realpath */
#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC_LEN 6
static const unsigned char npy_magic[MAGIC_LEN] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
/* numpy's reader refuses headers above 10000 bytes unless told otherwise; a
 * larger limit here costs nothing and still stops absurd allocations. */
#define MAX_HEADER_LEN (1u << 20)
#define ARRAY_ALIGN 64
#define GROWTH_AXIS_MAX_DIGITS 21 /* numpy pads so shape[0] can grow in place */

static int fail(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

size_t npy_dtype_size(npy_dtype dt)
{
    switch (dt) {
    case NPY_F16: return 2;
    case NPY_F32: return 4;
    case NPY_F64: return 8;
    case NPY_I32: return 4;
    case NPY_I64: return 8;
    }
    return 0;
}

const char *npy_dtype_descr(npy_dtype dt)
{
    switch (dt) {
    case NPY_F16: return "<f2";
    case NPY_F32: return "<f4";
    case NPY_F64: return "<f8";
    case NPY_I32: return "<i4";
    case NPY_I64: return "<i8";
    }
    return "?";
}

int npy_shape_count(int ndim, const int64_t *shape, int64_t *count)
{
    int64_t n = 1;
    if (ndim < 0 || ndim > NPY_MAX_DIMS) return 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) return 0;
        if (shape[i] != 0 && n > INT64_MAX / shape[i]) return 0;
        n *= shape[i];
    }
    *count = n;
    return 1;
}

void npy_shape_str(int ndim, const int64_t *shape, char *buf, size_t cap)
{
    size_t at = 0;
    if (!cap) return;
    buf[0] = '\0';
#define PUT(...)                                                                \
    do {                                                                        \
        int w_ = snprintf(buf + at, cap - at, __VA_ARGS__);                     \
        if (w_ < 0 || (size_t)w_ >= cap - at) return;                          \
        at += (size_t)w_;                                                       \
    } while (0)
    PUT("(");
    for (int i = 0; i < ndim; i++) PUT(i ? ", %lld" : "%lld", (long long)shape[i]);
    if (ndim == 1) PUT(",");
    PUT(")");
#undef PUT
}

void npy_free(npy_array *a)
{
    if (!a) return;
    free(a->data);
    a->data = NULL;
}

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* .npy data is little-endian; on a big-endian host swap in place. */
static void to_from_le(void *data, size_t elsize, int64_t count)
{
    if (host_is_little_endian() || elsize == 1) return;
    unsigned char *p = data;
    for (int64_t i = 0; i < count; i++, p += elsize)
        for (size_t a = 0, b = elsize - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* ---- header dict parser ------------------------------------------------- */

typedef struct cursor {
    const char *s, *end;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->s < c->end && (*c->s == ' ' || *c->s == '\t' || *c->s == '\n' || *c->s == '\r')) c->s++;
}

static int eat(cursor *c, char ch)
{
    skip_ws(c);
    if (c->s < c->end && *c->s == ch) {
        c->s++;
        return 1;
    }
    return 0;
}

/* A Python string literal in single or double quotes, no escapes (numpy's
 * keys and descrs never need them). */
static int parse_str(cursor *c, char *out, size_t cap)
{
    skip_ws(c);
    if (c->s >= c->end || (*c->s != '\'' && *c->s != '"')) return 0;
    char q = *c->s++;
    size_t n = 0;
    while (c->s < c->end && *c->s != q) {
        if (*c->s == '\\' || *c->s == '\n' || n + 1 >= cap) return 0;
        out[n++] = *c->s++;
    }
    if (c->s >= c->end) return 0;
    c->s++;
    out[n] = '\0';
    return 1;
}

static int parse_word(cursor *c, const char *w)
{
    skip_ws(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->s) < n || memcmp(c->s, w, n)) return 0;
    const char *after = c->s + n;
    if (after < c->end && ((*after >= 'a' && *after <= 'z') || (*after >= 'A' && *after <= 'Z') ||
                           (*after >= '0' && *after <= '9') || *after == '_'))
        return 0;
    c->s = after;
    return 1;
}

/* Returns 1 ok, 0 syntax error, -1 integer too large. */
static int parse_dim(cursor *c, int64_t *out)
{
    skip_ws(c);
    if (c->s >= c->end || *c->s < '0' || *c->s > '9') return 0;
    int64_t v = 0;
    int big = 0;
    while (c->s < c->end && *c->s >= '0' && *c->s <= '9') {
        int d = *c->s++ - '0';
        if (v > (INT64_MAX - d) / 10) big = 1;
        else v = v * 10 + d;
    }
    if (c->s < c->end && *c->s == 'L') c->s++; /* Python 2 longs: numpy < 1.17 wrote "3L" */
    if (big) return -1;
    *out = v;
    return 1;
}

typedef struct header_info {
    npy_dtype dtype;
    int ndim;
    int64_t shape[NPY_MAX_DIMS];
} header_info;

static int parse_descr(const char *name, const char *d, npy_dtype *dt, char *err, size_t errlen)
{
    static const struct { const char *code; npy_dtype dt; } known[] = {
        {"f2", NPY_F16}, {"f4", NPY_F32}, {"f8", NPY_F64}, {"i4", NPY_I32}, {"i8", NPY_I64}};
    char order = d[0];
    const char *code = d + 1;
    if (order != '<' && order != '>' && order != '|' && order != '=')
        return fail(err, errlen, "%s: unsupported dtype '%s' (supported: <f2, <f4, <f8, <i4, <i8)", name, d);
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(code, known[i].code)) {
            if (order == '>')
                return fail(err, errlen,
                            "%s: big-endian dtype '%s' is not supported (save with arr.astype('<%s'))", name, d,
                            code);
            /* '|' means "byte order not applicable", which numpy uses only
             * for 1-byte types; '=' is native, which numpy never writes. */
            if (order != '<')
                return fail(err, errlen, "%s: dtype '%s' has no explicit little-endian byte order", name, d);
            *dt = known[i].dt;
            return 0;
        }
    return fail(err, errlen, "%s: unsupported dtype '%s' (supported: <f2, <f4, <f8, <i4, <i8)", name, d);
}

static int parse_dict(const char *name, const char *s, size_t n, header_info *h, char *err, size_t errlen)
{
    cursor c = {s, s + n};
    int have_descr = 0, have_fortran = 0, have_shape = 0;
    char key[32], descr[64];
    if (!eat(&c, '{')) return fail(err, errlen, "%s: header is not a Python dict literal", name);
    for (;;) {
        if (eat(&c, '}')) break;
        if (!parse_str(&c, key, sizeof key)) return fail(err, errlen, "%s: header dict: expected a quoted key", name);
        if (!eat(&c, ':')) return fail(err, errlen, "%s: header dict: expected ':' after '%s'", name, key);
        if (!strcmp(key, "descr")) {
            if (have_descr) return fail(err, errlen, "%s: header dict: duplicate key 'descr'", name);
            skip_ws(&c);
            if (c.s < c.end && (*c.s == '[' || *c.s == '{'))
                return fail(err, errlen, "%s: structured dtypes are not supported (need a plain <f2, <f4, <f8, <i4 or <i8)", name);
            if (!parse_str(&c, descr, sizeof descr) || !descr[0])
                return fail(err, errlen, "%s: header dict: 'descr' is not a dtype string", name);
            if (parse_descr(name, descr, &h->dtype, err, errlen)) return -1;
            have_descr = 1;
        } else if (!strcmp(key, "fortran_order")) {
            if (have_fortran) return fail(err, errlen, "%s: header dict: duplicate key 'fortran_order'", name);
            if (parse_word(&c, "True"))
                return fail(err, errlen, "%s: Fortran-order (column-major) arrays are not supported; save a C-contiguous array (np.ascontiguousarray)", name);
            if (!parse_word(&c, "False"))
                return fail(err, errlen, "%s: header dict: 'fortran_order' is not True or False", name);
            have_fortran = 1;
        } else if (!strcmp(key, "shape")) {
            if (have_shape) return fail(err, errlen, "%s: header dict: duplicate key 'shape'", name);
            if (!eat(&c, '(')) return fail(err, errlen, "%s: header dict: 'shape' is not a tuple", name);
            int nd = 0, trailing_comma = 0;
            while (!eat(&c, ')')) {
                if (nd == NPY_MAX_DIMS)
                    return fail(err, errlen, "%s: more than %d dimensions are not supported", name, NPY_MAX_DIMS);
                int r = parse_dim(&c, &h->shape[nd]);
                if (r < 0) return fail(err, errlen, "%s: shape: dimension %d does not fit in 64 bits", name, nd);
                if (r == 0) return fail(err, errlen, "%s: shape: dimension %d is not a non-negative integer", name, nd);
                nd++;
                trailing_comma = eat(&c, ',');
                if (!trailing_comma) {
                    if (!eat(&c, ')')) return fail(err, errlen, "%s: shape: expected ',' or ')' after dimension %d", name, nd - 1);
                    break;
                }
            }
            /* "(3)" is an int in Python, not a tuple. */
            if (nd == 1 && !trailing_comma) return fail(err, errlen, "%s: header dict: 'shape' (n) is not a tuple; numpy writes (n,)", name);
            h->ndim = nd;
            have_shape = 1;
        } else {
            return fail(err, errlen, "%s: header dict: unexpected key '%s'", name, key);
        }
        if (eat(&c, ',')) continue;
        if (eat(&c, '}')) break;
        return fail(err, errlen, "%s: header dict: expected ',' or '}' after '%s'", name, key);
    }
    skip_ws(&c);
    if (c.s != c.end) return fail(err, errlen, "%s: header: unexpected text after the dict", name);
    if (!have_descr) return fail(err, errlen, "%s: header dict: missing 'descr'", name);
    if (!have_fortran) return fail(err, errlen, "%s: header dict: missing 'fortran_order'", name);
    if (!have_shape) return fail(err, errlen, "%s: header dict: missing 'shape'", name);
    return 0;
}

/* Check magic and version and find the header length.  `avail` bytes of the
 * file are in buf (at least 12 when the file has them).  On success
 * *hdr_off is where the dict starts and *data_off where the data starts. */
static int parse_preamble(const char *name, const unsigned char *buf, size_t avail, size_t *hdr_off,
                          size_t *data_off, char *err, size_t errlen)
{
    size_t m = avail < MAGIC_LEN ? avail : MAGIC_LEN;
    if (memcmp(buf, npy_magic, m))
        return fail(err, errlen, "%s: not a .npy file (bad magic; expected \\x93NUMPY)", name);
    if (avail < 8)
        return fail(err, errlen, "%s: truncated: %zu byte%s, too short for a .npy preamble", name, avail,
                    avail == 1 ? "" : "s");
    unsigned major = buf[6], minor = buf[7];
    size_t len_bytes;
    if (major == 1 && minor == 0) len_bytes = 2;
    else if ((major == 2 || major == 3) && minor == 0) len_bytes = 4;
    else return fail(err, errlen, "%s: unsupported .npy format version %u.%u (supported: 1.0, 2.0, 3.0)", name, major, minor);
    if (avail < 8 + len_bytes) return fail(err, errlen, "%s: truncated header (file ends inside the header length)", name);
    uint32_t hlen = (uint32_t)buf[8] | (uint32_t)buf[9] << 8;
    if (len_bytes == 4) hlen |= (uint32_t)buf[10] << 16 | (uint32_t)buf[11] << 24;
    if (hlen > MAX_HEADER_LEN)
        return fail(err, errlen, "%s: header length %lu is implausibly large (limit %u)", name, (unsigned long)hlen, MAX_HEADER_LEN);
    *hdr_off = 8 + len_bytes;
    *data_off = *hdr_off + hlen;
    return 0;
}

/* Parse the dict at buf[hdr_off, data_off) and derive the element count. */
static int parse_header_body(const char *name, const unsigned char *buf, size_t hdr_off, size_t data_off,
                             header_info *h, int64_t *count, size_t *nbytes, char *err, size_t errlen)
{
    const char *s = (const char *)buf + hdr_off;
    size_t n = data_off - hdr_off;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\0' || (unsigned char)s[i] >= 0x80)
            return fail(err, errlen, "%s: header holds a non-ASCII or NUL byte at offset %zu", name, hdr_off + i);
    if (parse_dict(name, s, n, h, err, errlen)) return -1;
    char sh[256];
    npy_shape_str(h->ndim, h->shape, sh, sizeof sh);
    size_t es = npy_dtype_size(h->dtype);
    if (!npy_shape_count(h->ndim, h->shape, count) || (uint64_t)*count > SIZE_MAX / es ||
        (uint64_t)*count > (uint64_t)INT64_MAX / es)
        return fail(err, errlen, "%s: shape %s is too large (element count or byte size overflows)", name, sh);
    *nbytes = (size_t)*count * es;
    return 0;
}

static void fill_array(npy_array *out, const header_info *h, int64_t count, void *data)
{
    out->dtype = h->dtype;
    out->ndim = h->ndim;
    memset(out->shape, 0, sizeof out->shape);
    for (int i = 0; i < h->ndim; i++) out->shape[i] = h->shape[i];
    out->count = count;
    out->data = data;
}

static int size_mismatch(const char *name, const header_info *h, size_t want, uint64_t have, char *err, size_t errlen)
{
    char sh[256];
    npy_shape_str(h->ndim, h->shape, sh, sizeof sh);
    if (have < want)
        return fail(err, errlen, "%s: truncated data: shape %s of %s needs %zu bytes, the file holds %llu", name, sh,
                    npy_dtype_descr(h->dtype), want, (unsigned long long)have);
    return fail(err, errlen, "%s: %llu byte%s of extra data after shape %s of %s (%zu bytes)", name,
                (unsigned long long)(have - want), have - want == 1 ? "" : "s", sh, npy_dtype_descr(h->dtype), want);
}

int npy_parse(const char *name, const unsigned char *buf, size_t len, npy_array *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t hdr_off, data_off, nbytes;
    header_info h;
    int64_t count;
    if (parse_preamble(name, buf, len, &hdr_off, &data_off, err, errlen)) return -1;
    if (len < data_off) return fail(err, errlen, "%s: truncated header (%zu of %zu header bytes present)", name, len, data_off);
    if (parse_header_body(name, buf, hdr_off, data_off, &h, &count, &nbytes, err, errlen)) return -1;
    if (len - data_off != nbytes) return size_mismatch(name, &h, nbytes, len - data_off, err, errlen);
    void *data = malloc(nbytes ? nbytes : 1);
    if (!data) return fail(err, errlen, "%s: out of memory for %zu bytes", name, nbytes);
    if (nbytes) memcpy(data, buf + data_off, nbytes);
    to_from_le(data, npy_dtype_size(h.dtype), count);
    fill_array(out, &h, count, data);
    return 0;
}

int npy_read(const char *path, npy_array *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    /* non-blocking, so that a FIFO or a device is refused below instead of
     * waiting for a writer; a regular file reads the same either way */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return fail(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int e = errno;
        close(fd);
        return fail(err, errlen, "%s: cannot open: %s", path, strerror(e));
    }
    int rc = -1;
    unsigned char pre[12];
    unsigned char *hdr = NULL;
    void *data = NULL;
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        fail(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
        goto done;
    }
    if (!S_ISREG(st.st_mode)) {
        fail(err, errlen, "%s: not a regular file", path);
        goto done;
    }
    uint64_t fsize = (uint64_t)st.st_size;
    size_t got = fread(pre, 1, sizeof pre, f);
    size_t hdr_off, data_off, nbytes;
    if (parse_preamble(path, pre, got, &hdr_off, &data_off, err, errlen)) goto done;
    if (fsize < data_off) {
        fail(err, errlen, "%s: truncated header (%llu of %zu header bytes present)", path, (unsigned long long)fsize, data_off);
        goto done;
    }
    hdr = malloc(data_off);
    if (!hdr) {
        fail(err, errlen, "%s: out of memory for the header", path);
        goto done;
    }
    if (fseek(f, 0, SEEK_SET) != 0 || fread(hdr, 1, data_off, f) != data_off) {
        fail(err, errlen, "%s: read error in the header", path);
        goto done;
    }
    header_info h;
    int64_t count;
    if (parse_header_body(path, hdr, hdr_off, data_off, &h, &count, &nbytes, err, errlen)) goto done;
    /* Compare with the file size before allocating, so an absurd shape in a
     * small file is an error message, not a giant malloc. */
    if (fsize - data_off != nbytes) {
        size_mismatch(path, &h, nbytes, fsize - data_off, err, errlen);
        goto done;
    }
    data = malloc(nbytes ? nbytes : 1);
    if (!data) {
        fail(err, errlen, "%s: out of memory for %zu bytes of data", path, nbytes);
        goto done;
    }
    if (nbytes && fread(data, 1, nbytes, f) != nbytes) {
        fail(err, errlen, "%s: read error in the data (file changed while reading?)", path);
        goto done;
    }
    to_from_le(data, npy_dtype_size(h.dtype), count);
    fill_array(out, &h, count, data);
    data = NULL;
    rc = 0;
done:
    free(hdr);
    free(data);
    fclose(f);
    return rc;
}

size_t npy_format_header(npy_dtype dt, int ndim, const int64_t *shape, unsigned char *buf, size_t cap)
{
    int64_t count;
    if (npy_dtype_size(dt) == 0 || !npy_shape_count(ndim, shape, &count)) return 0;
    char dict[64 + NPY_MAX_DIMS * 24 + GROWTH_AXIS_MAX_DIGITS];
    char sh[NPY_MAX_DIMS * 24 + 8];
    npy_shape_str(ndim, shape, sh, sizeof sh);
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     npy_dtype_descr(dt), sh);
    if (n < 0 || (size_t)n >= sizeof dict) return 0;
    size_t dl = (size_t)n;
    if (ndim > 0) {
        char d0[24];
        int w = snprintf(d0, sizeof d0, "%lld", (long long)shape[0]);
        for (int i = w; i < GROWTH_AXIS_MAX_DIGITS; i++) dict[dl++] = ' ';
    }
    /* v1.0 has a 16-bit header length; v2.0 only when that cannot hold it. */
    size_t hlen = dl + 1; /* + '\n' */
    size_t pre = MAGIC_LEN + 2 + 2;
    size_t pad = ARRAY_ALIGN - (pre + hlen) % ARRAY_ALIGN;
    int major = 1;
    if (hlen + pad > 65535) {
        major = 2;
        pre = MAGIC_LEN + 2 + 4;
        pad = ARRAY_ALIGN - (pre + hlen) % ARRAY_ALIGN;
    }
    size_t total = pre + hlen + pad;
    if (total > cap) return 0;
    memcpy(buf, npy_magic, MAGIC_LEN);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    uint32_t hl = (uint32_t)(hlen + pad);
    buf[8] = (unsigned char)(hl & 0xff);
    buf[9] = (unsigned char)(hl >> 8 & 0xff);
    if (major == 2) {
        buf[10] = (unsigned char)(hl >> 16 & 0xff);
        buf[11] = (unsigned char)(hl >> 24 & 0xff);
    }
    memcpy(buf + pre, dict, dl);
    memset(buf + pre + dl, ' ', pad);
    buf[total - 1] = '\n';
    return total;
}

/* A new file beside path, path + suffix ("XXXXXX" last) made unique by mkstemp, or where that name
 * is too long (near NAME_MAX) a short one in path's directory; its descriptor, its name in *name
 * (free it), or -1 with errno (ENOMEM when the name could not be allocated). */
static int mkstemp_beside(const char *path, const char *suffix, char **name)
{
    const size_t pl = strlen(path), sl = strlen(suffix);
    char *b = malloc(pl + (sl > 12 ? sl : 12) + 1);
    *name = NULL;
    if (!b) return errno = ENOMEM, -1;
    memcpy(b, path, pl);
    memcpy(b + pl, suffix, sl + 1);
    int fd = mkstemp(b);
    if (fd < 0 && errno == ENAMETOOLONG) {
        const char *slash = strrchr(path, '/');
        const size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
        memcpy(b + dl, ".sgla-XXXXXX", 13);
        fd = mkstemp(b);
    }
    if (fd < 0) {
        const int e = errno;
        free(b);
        return errno = e, -1;
    }
    *name = b;
    return fd;
}

/* Write the file to a new temporary name beside path (created, mode 0666 less
 * the umask, as fopen would); *tmp_out receives that name. */
FILE *npy_temp_beside(const char *path, char **tmp_out, char *err, size_t errlen)
{
    *tmp_out = NULL;
    char *tmp;
    const int fd = mkstemp_beside(path, ".tmp-XXXXXX", &tmp);
    if (fd < 0) {
        int e = errno;
        return fail(err, errlen, "%s: cannot create: %s", path, strerror(e)), NULL;
    }
    /* mkstemp makes it 0600: the mode a plain fopen would have given */
    const mode_t mask = umask(0);
    umask(mask);
    FILE *f = fchmod(fd, 0666 & ~mask) == 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        int e = errno;
        close(fd);
        unlink(tmp);
        free(tmp);
        return fail(err, errlen, "%s: cannot create: %s", path, strerror(e)), NULL;
    }
    *tmp_out = tmp;
    return f;
}

static int write_temp(const char *path, npy_dtype dt, int ndim, const int64_t *shape, const void *data,
                      char **tmp_out, char *err, size_t errlen)
{
    *tmp_out = NULL;
    int64_t count;
    size_t es = npy_dtype_size(dt);
    if (es == 0) return fail(err, errlen, "%s: cannot write: unknown dtype %d", path, (int)dt);
    if (ndim < 0 || ndim > NPY_MAX_DIMS) return fail(err, errlen, "%s: cannot write: %d dimensions", path, ndim);
    if (!npy_shape_count(ndim, shape, &count) || (uint64_t)count > SIZE_MAX / es)
        return fail(err, errlen, "%s: cannot write: shape is negative or too large", path);
    size_t nbytes = (size_t)count * es;
    if (nbytes && !data) return fail(err, errlen, "%s: cannot write: no data", path);
    unsigned char hdr[1024];
    size_t hl = npy_format_header(dt, ndim, shape, hdr, sizeof hdr);
    if (!hl) return fail(err, errlen, "%s: cannot write: header does not fit", path);

    char *tmp;
    FILE *f = npy_temp_beside(path, &tmp, err, errlen);
    if (!f) return -1;
    int ok = fwrite(hdr, 1, hl, f) == hl;
    if (ok && nbytes) {
        if (host_is_little_endian()) {
            ok = fwrite(data, 1, nbytes, f) == nbytes;
        } else {
            /* Swap through a small buffer rather than touching the caller's data. */
            unsigned char buf[4096];
            const unsigned char *p = data;
            size_t per = sizeof buf / es;
            for (size_t done = 0; ok && done < (size_t)count; done += per) {
                size_t m = (size_t)count - done < per ? (size_t)count - done : per;
                memcpy(buf, p + done * es, m * es);
                to_from_le(buf, es, (int64_t)m);
                ok = fwrite(buf, es, m, f) == m;
            }
        }
    }
    int e = ok ? 0 : errno;
    if (fclose(f) != 0 && ok) ok = 0, e = errno;
    if (!ok) {
        unlink(tmp); /* only what this call created */
        free(tmp);
        return fail(err, errlen, "%s: write failed: %s", path, strerror(e ? e : EIO));
    }
    *tmp_out = tmp;
    return 0;
}

int npy_outputs_add(npy_outputs *s, const char *path, npy_dtype dt, int ndim, const int64_t *shape,
                    const void *data, char *err, size_t errlen)
{
    if (s->n >= NPY_MAX_OUTPUTS) return fail(err, errlen, "%s: more than %d outputs", path, NPY_MAX_OUTPUTS);
    /* a target the commit's rename would refuse, found now: the commit renames one file after
     * another, and one refused there would leave the earlier ones in place */
    struct stat sb;
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) return fail(err, errlen, "%s: is a directory", path);
        /* a device, FIFO or socket: the rename would replace the node itself with a regular file
         * (as root, --o /dev/null would delete /dev/null) */
        if (!S_ISREG(sb.st_mode))
            return fail(err, errlen, "%s: not a regular file (a device, FIFO or socket); outputs are written to a "
                                     "temporary file and renamed over the target", path);
    }
    char *tmp;
    if (write_temp(path, dt, ndim, shape, data, &tmp, err, errlen)) return -1;
    s->tmp[s->n] = tmp;
    s->dst[s->n] = path;
    s->n++;
    return 0;
}

void npy_outputs_abort(npy_outputs *s)
{
    for (int i = 0; i < s->n; i++) {
        if (s->tmp[i]) unlink(s->tmp[i]);
        free(s->tmp[i]);
    }
    memset(s, 0, sizeof *s);
}

/* A free name beside path for its old file (path.old-XXXXXX, or a short one in its directory where the
 * name would be too long); NULL when none can be made. */
static char *backup_beside(const char *path)
{
    char *b;
    const int fd = mkstemp_beside(path, ".old-XXXXXX", &b);
    if (fd < 0) return NULL;
    close(fd);
    unlink(b); /* the name is what is wanted: link() makes it anew */
    return b;
}

/* Test hook (tests/test_cli_run.c): SGLA_NPY_FAIL_RENAME=i makes the rename of output i (from 0) into
 * place fail, as a file the directory's sticky bit or an immutable flag protects would. */
static int rename_into_place(const char *tmp, const char *dst, int i)
{
    const char *f = getenv("SGLA_NPY_FAIL_RENAME");
    if (f && *f && atoi(f) == i) return errno = EPERM, -1;
    return rename(tmp, dst);
}

/* Every target that exists is kept beside it first (a hard link, else renamed away), so that a rename
 * refused midway puts back the files already replaced: the targets all change, or none does. */
int npy_outputs_commit(npy_outputs *s, char *err, size_t errlen)
{
    char *bak[NPY_MAX_OUTPUTS] = {0};
    int away[NPY_MAX_OUTPUTS] = {0}; /* the target renamed to bak (absent until its new file lands) */
    int rc = 0, placed = 0, i;
    for (i = 0; i < s->n && !rc; i++) {
        struct stat sb;
        if (lstat(s->dst[i], &sb) != 0) continue; /* a new file: nothing to keep */
        if (!(bak[i] = backup_beside(s->dst[i]))) {
            rc = fail(err, errlen, "%s: cannot make a name for its old file: %s", s->dst[i], strerror(errno));
        } else if (link(s->dst[i], bak[i]) != 0) {
            if (rename(s->dst[i], bak[i]) == 0) {
                away[i] = 1;
            } else {
                rc = fail(err, errlen, "%s: cannot replace it: %s", s->dst[i], strerror(errno));
                free(bak[i]), bak[i] = NULL;
            }
        }
    }
    while (!rc && placed < s->n) {
        if (rename_into_place(s->tmp[placed], s->dst[placed], placed) != 0)
            rc = fail(err, errlen, "%s: cannot rename the finished file into place: %s", s->dst[placed],
                      strerror(errno));
        else
            placed++;
    }
    for (i = 0; i < s->n; i++) {
        if (!rc) { /* done: the old files go */
            if (bak[i]) unlink(bak[i]);
        } else if (i < placed) { /* refused: what was replaced comes back, what was new goes */
            if (bak[i]) rename(bak[i], s->dst[i]);
            else unlink(s->dst[i]);
        } else if (bak[i]) {
            if (away[i]) rename(bak[i], s->dst[i]);
            else unlink(bak[i]);
        }
        free(bak[i]);
        if (i < placed) free(s->tmp[i]), s->tmp[i] = NULL; /* renamed: nothing of it to remove */
    }
    npy_outputs_abort(s); /* the temporaries not renamed */
    return rc;
}

int npy_write(const char *path, npy_dtype dt, int ndim, const int64_t *shape, const void *data, char *err,
              size_t errlen)
{
    npy_outputs s;
    memset(&s, 0, sizeof s);
    if (npy_outputs_add(&s, path, dt, ndim, shape, data, err, errlen)) return -1;
    return npy_outputs_commit(&s, err, errlen);
}

/* path's directory made canonical, then its last component; NULL when the
 * directory does not resolve. */
static char *canonical_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char *dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
    if (!dir) return NULL;
    char *real = realpath(dir, NULL);
    free(dir);
    if (!real) return NULL;
    char *out = malloc(strlen(real) + strlen(base) + 2);
    if (out) sprintf(out, "%s/%s", real, base);
    free(real);
    return out;
}

int npy_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    const int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (ea != eb) return 0;
    char *ca = canonical_name(a), *cb = canonical_name(b);
    const int same = ca && cb ? strcmp(ca, cb) == 0 : strcmp(a, b) == 0;
    free(ca);
    free(cb);
    return same;
}
