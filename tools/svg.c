/* svg.c — see svg.h. */
#define _POSIX_C_SOURCE 200809L /* unlink */
#include "svg.h"
#include "npy.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int svg_open(svg *s, const char *path, double w, double h, char *err, size_t errlen)
{
    s->w = w;
    s->h = h;
    /* written beside path and renamed over it when complete, as the .npy
     * outputs are: a failed write (disk full) must not leave a cut picture */
    if (!(s->f = npy_temp_beside(path, &s->tmp, err, errlen))) return -1;
    fprintf(s->f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
            "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
            "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n",
            w, h, w, h, w, h);
    return 0;
}

int svg_close(svg *s, const char *path, char *err, size_t errlen)
{
    fprintf(s->f, "</svg>\n");
    int e = ferror(s->f) ? (errno ? errno : EIO) : 0;
    if (fclose(s->f) != 0 && !e) e = errno ? errno : EIO;
    s->f = NULL;
    if (!e && rename(s->tmp, path) != 0) e = errno;
    if (e) {
        unlink(s->tmp); /* only ours; path is left as it was */
        snprintf(err, errlen, "%s: write failed: %s", path, strerror(e));
    }
    free(s->tmp);
    s->tmp = NULL;
    return e ? -1 : 0;
}

void svg_rect(svg *s, double x, double y, double w, double h, const char *fill, const char *stroke, double sw)
{
    fprintf(s->f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"", x, y, w, h, fill);
    if (stroke && sw > 0) fprintf(s->f, " stroke=\"%s\" stroke-width=\"%.2f\"", stroke, sw);
    fprintf(s->f, "/>\n");
}

void svg_rect_alpha(svg *s, double x, double y, double w, double h, const char *fill, double opacity)
{
    fprintf(s->f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" fill-opacity=\"%.3f\"/>\n", x,
            y, w, h, fill, opacity);
}

static void stroke_attrs(svg *s, const char *stroke, double sw, const char *dash)
{
    fprintf(s->f, " fill=\"none\" stroke=\"%s\" stroke-width=\"%.2f\"", stroke, sw);
    if (dash) fprintf(s->f, " stroke-dasharray=\"%s\"", dash);
}

void svg_line(svg *s, double x1, double y1, double x2, double y2, const char *stroke, double sw, const char *dash)
{
    fprintf(s->f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"", x1, y1, x2, y2);
    stroke_attrs(s, stroke, sw, dash);
    fprintf(s->f, "/>\n");
}

void svg_polyline(svg *s, const double *x, const double *y, int n, const char *stroke, double sw, const char *dash)
{
    int i = 0;
    while (i < n) {
        while (i < n && !(isfinite(x[i]) && isfinite(y[i]))) i++;
        int j = i;
        while (j < n && isfinite(x[j]) && isfinite(y[j])) j++;
        if (j - i >= 2) {
            fprintf(s->f, "<polyline points=\"");
            for (int k = i; k < j; k++) fprintf(s->f, "%s%.2f,%.2f", k > i ? " " : "", x[k], y[k]);
            fprintf(s->f, "\"");
            stroke_attrs(s, stroke, sw, dash);
            fprintf(s->f, " stroke-linejoin=\"round\"/>\n");
        }
        i = j;
    }
}

void svg_polygon(svg *s, const double *x, const double *y, int n, const char *fill, double opacity)
{
    fprintf(s->f, "<polygon points=\"");
    for (int k = 0, first = 1; k < n; k++)
        if (isfinite(x[k]) && isfinite(y[k])) {
            fprintf(s->f, "%s%.2f,%.2f", first ? "" : " ", x[k], y[k]);
            first = 0;
        }
    fprintf(s->f, "\" fill=\"%s\" fill-opacity=\"%.3f\" stroke=\"none\"/>\n", fill, opacity);
}

void svg_circle(svg *s, double x, double y, double r, const char *fill, const char *stroke, double sw)
{
    fprintf(s->f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" fill=\"%s\"", x, y, r, fill);
    if (stroke && sw > 0) fprintf(s->f, " stroke=\"%s\" stroke-width=\"%.2f\"", stroke, sw);
    fprintf(s->f, "/>\n");
}

void svg_cross(svg *s, double x, double y, double r, const char *stroke, double sw)
{
    svg_line(s, x - r, y - r, x + r, y + r, stroke, sw, NULL);
    svg_line(s, x - r, y + r, x + r, y - r, stroke, sw, NULL);
}

void svg_text(svg *s, double x, double y, double size, const char *anchor, double rotate, int bold,
              const char *fill, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(s->f, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.1f\" text-anchor=\"%s\" fill=\"%s\"", x, y, size,
            anchor, fill);
    if (bold) fprintf(s->f, " font-weight=\"bold\"");
    if (rotate != 0) fprintf(s->f, " transform=\"rotate(%.1f %.2f %.2f)\"", rotate, x, y);
    fprintf(s->f, ">");
    for (const char *p = buf; *p; p++) {
        switch (*p) {
        case '&': fputs("&amp;", s->f); break;
        case '<': fputs("&lt;", s->f); break;
        case '>': fputs("&gt;", s->f); break;
        case '"': fputs("&quot;", s->f); break;
        default: fputc(*p, s->f);
        }
    }
    fprintf(s->f, "</text>\n");
}

double svg_map(const svg_axis *a, double v)
{
    double lo = a->lo, hi = a->hi;
    if (a->log) {
        lo = log10(lo);
        hi = log10(hi);
        v = v > 0 ? log10(v) : NAN;
    }
    return a->p0 + (v - lo) / (hi - lo) * (a->p1 - a->p0);
}

/* Viridis sampled at 9 points (matplotlib's table), linearly interpolated:
 * perceptually uniform enough for a figure and readable in grey scale. */
static const unsigned char viridis9[9][3] = {
    {68, 1, 84},    {71, 44, 122},  {59, 81, 139},   {44, 113, 142}, {33, 144, 141},
    {39, 173, 129}, {92, 200, 99},  {170, 220, 50},  {253, 231, 37}};

void svg_viridis(double t, char out[8])
{
    if (!(t >= 0)) t = 0;
    if (t > 1) t = 1;
    double u = t * 8;
    int i = (int)u;
    if (i > 7) i = 7;
    double f = u - i;
    int rgb[3];
    for (int c = 0; c < 3; c++) rgb[c] = (int)lround(viridis9[i][c] * (1 - f) + viridis9[i + 1][c] * f);
    snprintf(out, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

const char *svg_viridis_ink(double t) { return t > 0.55 ? "#000000" : "#ffffff"; }
