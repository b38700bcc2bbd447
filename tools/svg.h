/*
 * svg.h — a tiny SVG writer for `sgla plot`: self-contained files (no
 * external fonts, styles or scripts), plain shapes and text, plus the
 * axis mapping and colour scale the figures share.
 */
#ifndef SGLA_SVG_H
#define SGLA_SVG_H

#include <stddef.h>
#include <stdio.h>

typedef struct svg {
    FILE *f;
    char *tmp; /* the file being written, renamed to path by svg_close */
    double w, h;
} svg;

/* Open a temporary file beside path and write the header of a w x h picture
 * on a white ground; 0 or -1 with a message in err. */
int svg_open(svg *s, const char *path, double w, double h, char *err, size_t errlen);
/* Write the footer, close and rename the file over path; -1 (message in
 * err) if any write failed, with the temporary file removed and path as it
 * was (never a truncated picture). */
int svg_close(svg *s, const char *path, char *err, size_t errlen);

/* Colours are any SVG colour string ("#1f77b4", "none").  dash may be NULL
 * (solid) or a dasharray ("6 3"). */
void svg_rect(svg *s, double x, double y, double w, double h, const char *fill, const char *stroke, double sw);
void svg_rect_alpha(svg *s, double x, double y, double w, double h, const char *fill, double opacity);
void svg_line(svg *s, double x1, double y1, double x2, double y2, const char *stroke, double sw, const char *dash);
/* A polyline through n points; points with a non-finite coordinate break
 * the line into pieces (NaN is a gap, not a jump). */
void svg_polyline(svg *s, const double *x, const double *y, int n, const char *stroke, double sw, const char *dash);
/* A closed polygon filled with fill at the given opacity, no stroke. */
void svg_polygon(svg *s, const double *x, const double *y, int n, const char *fill, double opacity);
void svg_circle(svg *s, double x, double y, double r, const char *fill, const char *stroke, double sw);
void svg_cross(svg *s, double x, double y, double r, const char *stroke, double sw);

/* Text at (x, y) (baseline); anchor "start" | "middle" | "end"; rotate in
 * degrees about (x, y); weight 1 for bold.  The formatted string is
 * XML-escaped. */
void svg_text(svg *s, double x, double y, double size, const char *anchor, double rotate, int bold,
              const char *fill, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 9, 10)))
#endif
    ;

/* A linear or log10 axis mapping data [lo, hi] to pixels [p0, p1]. */
typedef struct svg_axis {
    double lo, hi, p0, p1;
    int log;
} svg_axis;
double svg_map(const svg_axis *a, double v);

/* The viridis colour scale at t in [0, 1] as "#rrggbb" (out: 8 bytes). */
void svg_viridis(double t, char out[8]);
/* Black or white, whichever reads better on the viridis colour at t. */
const char *svg_viridis_ink(double t);

#endif
