/*
 * sgla plot: the figures of the design article as self-contained SVG files.
 *
 *   decay.svg           the decay matrix Gamma for one alpha and chunk C
 *   error_vs_alpha.svg  ratio vs factorised one-chunk error in fp16 storage
 *   bounds.svg          overflow / underflow bounds against C, fp16 and fp32
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "ref/ref.h"
#include "svg.h"

#define PLOT_SEED 20261129ull /* --seed's default */

#define CMD "plot"

/* fp16 limits (IEEE binary16). */
#define F16_MAX 65504.0
#define F16_MIN_NORMAL 6.103515625e-05      /* 2^-14 */
#define F16_MIN_SUBNORMAL 5.9604644775390625e-08 /* 2^-24 */
/* A weight below half the smallest subnormal rounds to zero. */
#define F16_ZERO_BELOW 2.98023223876953125e-08 /* 2^-25 */
#define F32_ZERO_BELOW 7.00649232162408535e-46 /* 2^-150 */

/* The error figure: the article's experiment (SPEC §4 level 3). */
#define ERR_C 64
#define ERR_D 64
#define ERR_TRIALS 20 /* default; --trials changes it */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: sgla plot --out DIR [--alpha A] [--chunk C] [--seed N] [--trials N]\n"
            "\n"
            "Write three self-contained SVG figures into DIR (created if missing; its parent must exist):\n"
            "  decay.svg           the decay matrix Gamma_ij = alpha^(i-j) for j <= i, 0 above\n"
            "                      (--alpha, default 0.9; --chunk, default 16, at most 256)\n"
            "  error_vs_alpha.svg  rel L2 error of the ratio form and the factorised form of one\n"
            "                      chunk (C = %d, K = V = %d, fp16 storage, fp32 accumulation, median of\n"
            "                      --trials random inputs, default %d, from --seed, default %llu) against\n"
            "                      alpha, the NaN region marked\n"
            "  bounds.svg          overflow of the factorised weight alpha^-(C-1) and underflow of the\n"
            "                      ratio form's smallest weight alpha^(C-1) against C, fp16 and fp32\n"
            "Exit status: 0 success, 1 a file that cannot be written, 2 a usage error.\n",
            ERR_C, ERR_D, ERR_TRIALS, (unsigned long long)PLOT_SEED);
}

static int make_dir(const char *dir, char *err, size_t el)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return 0;
        snprintf(err, el, "--out: %s exists and is not a directory", dir);
        return -1;
    }
    if (mkdir(dir, 0777) != 0) {
        snprintf(err, el, "--out: cannot create directory %s: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

static int join(char *buf, size_t cap, const char *dir, const char *name, char *err, size_t el)
{
    int n = snprintf(buf, cap, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= cap) {
        snprintf(err, el, "--out: path too long");
        return -1;
    }
    return 0;
}

/* "1.27e6"-style compact numbers for labels; plain decimals where short. */
static void fmt_num(char *out, size_t cap, double v)
{
    double a = fabs(v);
    if (v == 0) snprintf(out, cap, "0");
    else if (a >= 1e-3 && a < 1e5) snprintf(out, cap, "%.4g", v);
    else {
        int e = (int)floor(log10(a));
        double m = v / pow(10, e);
        if (fabs(m) >= 9.995) {
            m /= 10;
            e++;
        }
        snprintf(out, cap, "%.3ge%d", m, e);
    }
}

/* Axes box, and tick marks with labels on a log-10 y axis every `step`
 * decades. */
static void frame(svg *s, double x, double y, double w, double h)
{
    svg_rect(s, x, y, w, h, "none", "#333333", 1);
}

static void log_y_ticks(svg *s, const svg_axis *ay, double x0, double x1, int step, int grid)
{
    int e0 = (int)ceil(log10(ay->lo) - 1e-9), e1 = (int)floor(log10(ay->hi) + 1e-9);
    for (int e = e0; e <= e1; e++) {
        if (((e % step) + step) % step) continue;
        double py = svg_map(ay, pow(10, e));
        if (grid) svg_line(s, x0, py, x1, py, "#e4e4e4", 0.8, NULL);
        svg_line(s, x0 - 5, py, x0, py, "#333333", 1, NULL);
        if (e == 0) svg_text(s, x0 - 8, py + 4, 11, "end", 0, 0, "#333333", "1");
        else svg_text(s, x0 - 8, py + 4, 11, "end", 0, 0, "#333333", "1e%d", e);
    }
}

/* x axis in C, log2 spaced, ticks at powers of two. */
static void c_ticks(svg *s, const svg_axis *ax, double y0, double y1)
{
    for (int c = 2; c <= 1024; c *= 2) {
        double px = svg_map(ax, c);
        svg_line(s, px, y0, px, y1, "#e4e4e4", 0.8, NULL);
        svg_line(s, px, y1, px, y1 + 5, "#333333", 1, NULL);
        svg_text(s, px, y1 + 18, 11, "middle", 0, 0, "#333333", "%d", c);
    }
}

/* ---- (a) the decay matrix ------------------------------------------------ */

static int plot_decay(const char *path, double alpha, int C, char *err, size_t el)
{
    const double cell = C <= 16 ? 36.0 : 576.0 / C, G = cell * C;
    const double L = 95, T = 105, W = L + G + 260, H = T + G + 60;
    svg s;
    if (svg_open(&s, path, W, H, err, el)) return -1;
    svg_text(&s, W / 2, 30, 17, "middle", 0, 1, "#111111", "Decay matrix \u0393 (\u03b1 = %g, C = %d)", alpha, C);
    svg_text(&s, W / 2, 52, 12.5, "middle", 0, 0, "#333333",
             "\u0393_ij = \u03b1^(i\u2212j) where j \u2264 i: equal along each diagonal, 1 on it; 0 above (future tokens, never evaluated)");

    const int step = C <= 16 ? 1 : (C + 15) / 16;
    for (int i = 0; i < C; i++)
        for (int j = 0; j < C; j++) {
            double x = L + j * cell, y = T + i * cell;
            const double sw = cell >= 8 ? 0.6 : 0;
            if (j <= i) {
                double w = pow(alpha, i - j);
                char col[8];
                svg_viridis(w, col);
                svg_rect(&s, x, y, cell, cell, col, "#ffffff", sw);
                if (C <= 16)
                    svg_text(&s, x + cell / 2, y + cell / 2 + 4, 10.5, "middle", 0, 0, svg_viridis_ink(w),
                             i == j ? "1" : "%.2f", w);
            } else {
                svg_rect(&s, x, y, cell, cell, "#f0f0f0", "#ffffff", sw);
                if (C <= 16) svg_text(&s, x + cell / 2, y + cell / 2 + 4, 10.5, "middle", 0, 0, "#aaaaaa", "0");
            }
        }
    frame(&s, L, T, G, G);
    /* 1-based positions, as the article counts them. */
    for (int p = 0; p < C; p += step) {
        double c = L + (p + 0.5) * cell, r = T + (p + 0.5) * cell;
        svg_text(&s, c, T - 8, 11, "middle", 0, 0, "#333333", "%d", p + 1);
        svg_text(&s, L - 8, r + 4, 11, "end", 0, 0, "#333333", "%d", p + 1);
    }
    svg_text(&s, L + G / 2, T - 28, 13, "middle", 0, 0, "#111111", "j: key position in the chunk");
    svg_text(&s, L - 45, T + G / 2, 13, "middle", -90, 0, "#111111", "i: query position in the chunk");

    /* Colour bar, linear 0..1, with the smallest weight marked. */
    const double bx = L + G + 40, bw = 22;
    const int nb = 100;
    for (int k = 0; k < nb; k++) {
        char col[8];
        svg_viridis((k + 0.5) / nb, col);
        svg_rect(&s, bx, T + G - (k + 1) * G / nb, bw, G / nb + 0.5, col, NULL, 0);
    }
    svg_rect(&s, bx, T, bw, G, "none", "#333333", 1);
    for (int k = 0; k <= 4; k++) {
        double py = T + G - k * G / 4;
        svg_line(&s, bx + bw, py, bx + bw + 5, py, "#333333", 1, NULL);
        svg_text(&s, bx + bw + 8, py + 4, 11, "start", 0, 0, "#333333", "%.2f", k / 4.0);
    }
    double wmin = pow(alpha, C - 1), pmin = T + G - wmin * G;
    svg_line(&s, bx - 4, pmin, bx + bw + 44, pmin, "#d62728", 2, NULL);
    char num[32];
    fmt_num(num, sizeof num, wmin);
    /* Keep the label clear of the tick labels it would overprint. */
    double near = fabs(wmin * 4 - floor(wmin * 4 + 0.5)) * G / 4, dy = near < 12 ? (wmin < 0.5 ? -10 : 16) : 4;
    svg_text(&s, bx + bw + 48, pmin + dy, 10.5, "start", 0, 0, "#d62728", "min \u03b1^(C\u22121) = %s", num);
    svg_text(&s, bx + bw / 2, T - 10, 12, "middle", 0, 0, "#111111", "\u0393_ij");
    svg_rect(&s, bx, T + G + 18, 14, 14, "#f0f0f0", "#999999", 0.8);
    svg_text(&s, bx + 20, T + G + 30, 11, "start", 0, 0, "#333333", "0 (j > i)");
    return svg_close(&s, path, err, el);
}

/* ---- (b) one-chunk error against alpha ----------------------------------- */

typedef struct err_curve {
    double alpha;
    double med[REF_L3_NUM_FORMS];
} err_curve;

/* The article's measured figures (SPEC §4 level 3), drawn for comparison. */
static const double art_alpha[5] = {0.99, 0.95, 0.90, 0.80, 0.50};
static const double art_ratio[5] = {4.39e-4, 4.57e-4, 4.47e-4, 4.60e-4, 4.14e-4};
static const double art_fact[5] = {4.15e-4, 4.14e-4, 4.15e-4, NAN, NAN};

static int plot_error(const char *path, uint64_t seed, int trials, char *err, size_t el)
{
    /* alpha 0.50..0.99 by 0.01, then closer to 1. */
    enum { NA = 50 + 2 };
    err_curve cv[NA];
    for (int i = 0; i < NA; i++) {
        cv[i].alpha = i < 50 ? 0.50 + 0.01 * i : (i == 50 ? 0.995 : 0.999);
        /* The same seed for every alpha: common random inputs make the
         * curves differ only through alpha. */
        /* the slow part (a median of `trials` fp16 emulations per alpha): progress on stderr,
         * overwritten in place on a terminal */
        fprintf(stderr, "%serror_vs_alpha: alpha %d of %d (%.3f)%s", isatty(2) ? "\r" : "", i + 1, NA, cv[i].alpha,
                isatty(2) ? (i + 1 == NA ? "\n" : "") : "\n");
        sgla_status st = ref_l3_median(cv[i].alpha, ERR_C, ERR_D, trials, seed, cv[i].med);
        if (st != SGLA_OK) {
            snprintf(err, el, "error_vs_alpha: ref_l3_median(alpha = %.3f): %s (%s)", cv[i].alpha,
                     sgla_status_string(st), sgla_last_error());
            return -1;
        }
    }
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < NA; i++)
        for (int f = 0; f < REF_L3_NUM_FORMS; f++)
            if (isfinite(cv[i].med[f]) && cv[i].med[f] > 0) {
                lo = fmin(lo, cv[i].med[f]);
                hi = fmax(hi, cv[i].med[f]);
            }
    if (!(lo <= hi)) lo = 1e-4, hi = 1e-3;
    lo = fmin(lo, 4.1e-4);
    hi = fmax(hi, 4.6e-4);
    double ylo = pow(10, floor(log10(lo / 1.3))), yhi = pow(10, ceil(log10(hi * 1.3)));

    /* NaN region of the factorised form: up to the midpoint between the
     * largest alpha where it fails and the next one. */
    double nan_hi = 0;
    for (int i = 0; i < NA; i++)
        if (!isfinite(cv[i].med[REF_L3_FACTORISED]))
            nan_hi = i + 1 < NA ? 0.5 * (cv[i].alpha + cv[i + 1].alpha) : cv[i].alpha;
    const double astar = pow(F16_MAX, -1.0 / (ERR_C - 1)); /* alpha^-(C-1) = fp16 max */

    const double L = 90, T = 85, PW = 620, PH = 390, W = L + PW + 250, H = T + PH + 95;
    svg s;
    if (svg_open(&s, path, W, H, err, el)) return -1;
    svg_text(&s, (L + PW) / 2 + 40, 28, 17, "middle", 0, 1, "#111111",
             "One chunk in fp16 storage: ratio form vs factorised form");
    svg_text(&s, (L + PW) / 2 + 40, 50, 12.5, "middle", 0, 0, "#333333",
             "C = %d, K = V = %d, fp16 operands, fp32 accumulation; rel L2 against fp64, median of %d random inputs (seed %llu)",
             ERR_C, ERR_D, trials, (unsigned long long)seed);
    svg_axis ax = {0.5, 1.0, L, L + PW, 0}, ay = {ylo, yhi, T + PH, T, 1};

    if (nan_hi > 0) svg_rect_alpha(&s, L, T, svg_map(&ax, nan_hi) - L, PH, "#d62728", 0.10);
    /* Grid and ticks. */
    for (int k = 0; k <= 10; k++) {
        double a = 0.5 + 0.05 * k, px = svg_map(&ax, a);
        svg_line(&s, px, T, px, T + PH, k % 2 ? "#f0f0f0" : "#e4e4e4", 0.8, NULL);
        svg_line(&s, px, T + PH, px, T + PH + 5, "#333333", 1, NULL);
        if (k % 2 == 0) svg_text(&s, px, T + PH + 18, 11, "middle", 0, 0, "#333333", "%.1f", a);
    }
    for (double dec = ylo; dec < yhi * 1.001; dec *= 10)
        for (int m = 1; m <= 9; m++) {
            double v = dec * m;
            if (v > yhi * 1.0001) break;
            double py = svg_map(&ay, v);
            svg_line(&s, L, py, L + PW, py, m == 1 ? "#e0e0e0" : "#f3f3f3", 0.8, NULL);
            svg_line(&s, L - (m == 1 ? 6 : 3), py, L, py, "#333333", 1, NULL);
            if (m == 1 || m == 2 || m == 5) {
                char num[32];
                fmt_num(num, sizeof num, v);
                svg_text(&s, L - 9, py + 4, 11, "end", 0, 0, "#333333", "%s", num);
            }
        }
    if (nan_hi > 0) {
        double x1 = svg_map(&ax, nan_hi);
        svg_text(&s, (L + x1) / 2, T + 22, 13, "middle", 0, 1, "#b22222", "factorised form: NaN");
        svg_text(&s, (L + x1) / 2, T + 40, 11, "middle", 0, 0, "#b22222",
                 "K\u00b7\u03b1^\u2212j overflows fp16 to inf; inf\u00b70 = NaN");
        svg_text(&s, (L + x1) / 2, T + 55, 11, "middle", 0, 0, "#b22222", "(measured for \u03b1 < %.3f)", nan_hi);
    }
    /* The article's band for the ratio form. */
    {
        double y0 = svg_map(&ay, 4.6e-4), y1 = svg_map(&ay, 4.1e-4);
        svg_rect_alpha(&s, L, y0, PW, y1 - y0, "#1f77b4", 0.08);
        svg_text(&s, L + PW - 6, y0 - 5, 10.5, "end", 0, 0, "#1f77b4", "published: ratio form in 4.1\u20134.6e\u22124");
    }
    /* alpha^-(C-1) = 65504. */
    {
        double px = svg_map(&ax, astar);
        svg_line(&s, px, T, px, T + PH, "#b22222", 1.2, "5 4");
        svg_text(&s, px + 5, T + PH - 10, 10.5, "start", 0, 0, "#b22222", "\u03b1^\u2212%d = 65504 at \u03b1 = %.4f",
                 ERR_C - 1, astar);
    }

    static const char *col[REF_L3_NUM_FORMS] = {"#2ca02c", "#1f77b4", "#ff7f0e"};
    static const char *dash[REF_L3_NUM_FORMS] = {"6 3", NULL, NULL};
    static const char *label[REF_L3_NUM_FORMS] = {"ratio form, \u0393 table in fp16",
                                                  "ratio form, \u0393 table in fp32 (sgla)",
                                                  "factorised (Q\u00b7\u03b1^i)(K\u00b7\u03b1^\u2212j)^T"};
    double xs[NA], ys[NA];
    for (int f = 0; f < REF_L3_NUM_FORMS; f++) {
        for (int i = 0; i < NA; i++) {
            xs[i] = svg_map(&ax, cv[i].alpha);
            ys[i] = isfinite(cv[i].med[f]) && cv[i].med[f] > 0 ? svg_map(&ay, cv[i].med[f]) : NAN;
        }
        svg_polyline(&s, xs, ys, NA, col[f], 2, dash[f]);
        for (int i = 0; i < NA; i++)
            if (isfinite(ys[i])) svg_circle(&s, xs[i], ys[i], 2.2, col[f], NULL, 0);
            else svg_cross(&s, xs[i], T + 70 + 8 * f, 3, col[f], 1.4);
    }
    for (int i = 0; i < 5; i++) {
        double px = svg_map(&ax, art_alpha[i]);
        svg_circle(&s, px, svg_map(&ay, art_ratio[i]), 5, "none", "#111111", 1.3);
        if (isfinite(art_fact[i])) {
            double py = svg_map(&ay, art_fact[i]);
            svg_rect(&s, px - 4.5, py - 4.5, 9, 9, "none", "#111111", 1.3);
        }
    }
    frame(&s, L, T, PW, PH);
    svg_text(&s, L + PW / 2, T + PH + 42, 13, "middle", 0, 0, "#111111", "\u03b1 (constant decay)");
    svg_text(&s, L - 62, T + PH / 2, 13, "middle", -90, 0, "#111111", "rel L2 error of O (log scale)");

    /* Legend. */
    double lx = L + PW + 20, ly = T + 10;
    for (int f = 0; f < REF_L3_NUM_FORMS; f++, ly += 22) {
        svg_line(&s, lx, ly, lx + 30, ly, col[f], 2, dash[f]);
        svg_text(&s, lx + 38, ly + 4, 11, "start", 0, 0, "#111111", "%s", label[f]);
    }
    svg_cross(&s, lx + 15, ly, 3, "#ff7f0e", 1.4);
    svg_text(&s, lx + 38, ly + 4, 11, "start", 0, 0, "#111111", "NaN (plotted at the top)");
    ly += 22;
    svg_circle(&s, lx + 15, ly, 5, "none", "#111111", 1.3);
    svg_text(&s, lx + 38, ly + 4, 11, "start", 0, 0, "#111111", "published: ratio form");
    ly += 22;
    svg_rect(&s, lx + 10.5, ly - 4.5, 9, 9, "none", "#111111", 1.3);
    svg_text(&s, lx + 38, ly + 4, 11, "start", 0, 0, "#111111", "published: factorised form");
    ly += 34;
    svg_text(&s, lx, ly, 11, "start", 0, 0, "#333333", "The ratio form keeps every weight");
    svg_text(&s, lx, ly + 15, 11, "start", 0, 0, "#333333", "in (0, 1]: its error does not");
    svg_text(&s, lx, ly + 30, 11, "start", 0, 0, "#333333", "depend on \u03b1. The factorised form");
    svg_text(&s, lx, ly + 45, 11, "start", 0, 0, "#333333", "needs \u03b1^\u2212(C\u22121) to fit in fp16.");
    return svg_close(&s, path, err, el);
}

/* ---- (c) overflow and underflow bounds against C ------------------------- */

static int plot_bounds(const char *path, char *err, size_t el)
{
    const double W = 1210, H = 660, T = 95, PH = 400;
    const double LA = 85, PWA = 440, LB = 800, PWB = 360;
    svg s;
    if (svg_open(&s, path, W, H, err, el)) return -1;
    svg_text(&s, W / 2, 30, 17, "middle", 0, 1, "#111111", "Overflow and underflow bounds of the decay weights against the chunk length C");
    svg_text(&s, W / 2, 52, 12.5, "middle", 0, 0, "#333333",
             "factorised form: largest weight \u03b1^\u2212(C\u22121) must not overflow;  ratio form: smallest weight \u03b1^(C\u22121) against the normal / subnormal / zero thresholds");

    enum { NS = 240 };
    double xs[NS], ys[NS];
    static const double alphas[5] = {0.99, 0.95, 0.9, 0.8, 0.5};
    static const char *acol[5] = {"#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#d62728"};

    /* Panel A: the weights themselves. */
    svg_axis ax = {2, 1024, LA, LA + PWA, 1}, ay = {1e-46, 1e40, T + PH, T, 1};
    svg_text(&s, LA + PWA / 2, T - 14, 13.5, "middle", 0, 1, "#111111", "weights against C, for five \u03b1");
    c_ticks(&s, &ax, T, T + PH);
    log_y_ticks(&s, &ay, LA, LA + PWA, 10, 1);
    static const struct { double v; const char *name, *col, *dash; } thr[] = {
        {FLT_MAX, "fp32 max 3.40e38", "#8b0000", NULL},
        {F16_MAX, "fp16 max 65504", "#d62728", NULL},
        {F16_MIN_NORMAL, "fp16 min normal 6.10e\u22125", "#1f4e9c", NULL},
        {F16_MIN_SUBNORMAL, "fp16 min subnormal 5.96e\u22128", "#1f4e9c", "5 3"},
        {FLT_MIN, "fp32 min normal 1.18e\u221238", "#6a3d9a", NULL},
        {1.401298464324817e-45, "fp32 min subnormal 1.40e\u221245", "#6a3d9a", "5 3"},
    };
    for (size_t t = 0; t < sizeof thr / sizeof thr[0]; t++) {
        double py = svg_map(&ay, thr[t].v);
        svg_line(&s, LA, py, LA + PWA, py, thr[t].col, 1.3, thr[t].dash);
        /* Labels just outside the plot, on the right, so curves stay clear. */
        double dy = (t == 2) ? -3 : (t == 3 ? 10 : 4);
        svg_text(&s, LA + PWA + 6, py + dy, 10, "start", 0, 0, thr[t].col, "%s", thr[t].name);
    }
    svg_line(&s, LA, svg_map(&ay, 1), LA + PWA, svg_map(&ay, 1), "#555555", 1, "2 2");
    for (int a = 0; a < 5; a++) {
        const double la = log(alphas[a]);
        for (int dir = 0; dir < 2; dir++) {
            for (int i = 0; i < NS; i++) {
                double c = pow(2, 1 + 9.0 * i / (NS - 1));
                double e = (dir ? 1 : -1) * (c - 1) * la; /* ln of alpha^+-(C-1) */
                double lv = e / log(10);
                xs[i] = svg_map(&ax, c);
                ys[i] = lv >= -46 && lv <= 40 ? svg_map(&ay, pow(10, lv)) : NAN;
            }
            svg_polyline(&s, xs, ys, NS, acol[a], 2, dir ? "7 4" : NULL);
        }
        /* Largest safe factorised exponent j: alpha^-j <= max, at C = j + 1. */
        const double lim[2] = {F16_MAX, FLT_MAX};
        for (int p = 0; p < 2; p++) {
            double j = floor(log(lim[p]) / -la);
            if (j + 1 > 1024) continue;
            double px = svg_map(&ax, j + 1), py = svg_map(&ay, lim[p]);
            svg_circle(&s, px, py, 3.5, acol[a], "#ffffff", 1);
            svg_text(&s, px - 3, py + (p ? -8 : 15), 10, "end", 0, 1, acol[a], "%.0f", j);
        }
    }
    frame(&s, LA, T, PWA, PH);
    svg_text(&s, LA + PWA / 2, T + PH + 40, 13, "middle", 0, 0, "#111111", "chunk length C (log scale)");
    svg_text(&s, LA - 55, T + PH / 2, 13, "middle", -90, 0, "#111111", "weight (log scale)");
    /* Legend under panel A. */
    double lx = LA, ly = T + PH + 68;
    for (int a = 0; a < 5; a++) {
        svg_line(&s, lx, ly, lx + 22, ly, acol[a], 3, NULL);
        svg_text(&s, lx + 27, ly + 4, 11, "start", 0, 0, "#111111", "\u03b1 = %g", alphas[a]);
        lx += 88;
    }
    ly += 22;
    svg_line(&s, LA, ly, LA + 30, ly, "#333333", 2, NULL);
    svg_text(&s, LA + 36, ly + 4, 11, "start", 0, 0, "#111111", "\u03b1^\u2212(C\u22121): factorised weight (overflow)");
    svg_line(&s, LA + 290, ly, LA + 320, ly, "#333333", 2, "7 4");
    svg_text(&s, LA + 326, ly + 4, 11, "start", 0, 0, "#111111", "\u03b1^(C\u22121): ratio-form minimum");
    ly += 20;
    svg_circle(&s, LA + 15, ly, 3.5, "#333333", "#ffffff", 1);
    svg_text(&s, LA + 36, ly + 4, 11, "start", 0, 0, "#111111",
             "largest safe exponent j (\u03b1^\u2212j \u2264 max): fp16 below the line, fp32 above");

    /* Panel B: the (C, alpha) plane, alpha shown as 1 - alpha on a log axis
     * so values near 1 get room. */
    svg_axis bx = {2, 1024, LB, LB + PWB, 1}, by = {5e-3, 0.5, T, T + PH, 1};
    svg_text(&s, LB + PWB / 2, T - 14, 13.5, "middle", 0, 1, "#111111", "where each hazard starts: (C, \u03b1) below a curve");
    c_ticks(&s, &bx, T, T + PH);
    static const double one_minus[] = {0.5, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005};
    static const char *alab[] = {"0.5", "0.7", "0.8", "0.9", "0.95", "0.98", "0.99", "0.995"};
    for (size_t k = 0; k < sizeof one_minus / sizeof one_minus[0]; k++) {
        double py = svg_map(&by, one_minus[k]);
        svg_line(&s, LB, py, LB + PWB, py, "#e4e4e4", 0.8, NULL);
        svg_line(&s, LB - 5, py, LB, py, "#333333", 1, NULL);
        svg_text(&s, LB - 8, py + 4, 11, "end", 0, 0, "#333333", "%s", alab[k]);
    }
    static const struct { double v; int over; const char *name, *col, *dash; } bd[] = {
        {F16_MAX, 1, "factorised > fp16 max", "#d62728", NULL},
        {FLT_MAX, 1, "factorised > fp32 max", "#8b0000", NULL},
        {F16_MIN_NORMAL, 0, "ratio min subnormal in fp16", "#1f4e9c", "7 4"},
        {F16_ZERO_BELOW, 0, "ratio min rounds to 0 in fp16", "#1f4e9c", "2 3"},
        {FLT_MIN, 0, "ratio min subnormal in fp32", "#6a3d9a", "7 4"},
        {F32_ZERO_BELOW, 0, "ratio min rounds to 0 in fp32", "#6a3d9a", "2 3"},
    };
    for (size_t t = 0; t < sizeof bd / sizeof bd[0]; t++) {
        /* alpha at which the weight hits the threshold: alpha^(+-(C-1)) = v. */
        double lv = log(bd[t].v);
        for (int i = 0; i < NS; i++) {
            double c = pow(2, 1 + 9.0 * i / (NS - 1));
            double la = (bd[t].over ? -lv : lv) / (c - 1); /* ln alpha at the boundary */
            double om = -expm1(la);                        /* 1 - alpha, without cancellation */
            xs[i] = svg_map(&bx, c);
            ys[i] = om >= 5e-3 && om <= 0.5 ? svg_map(&by, om) : NAN;
        }
        if (t == 0) {
            /* Shade the fp16 factorised failure region: below the curve. */
            double px[NS + 2], py[NS + 2];
            int m = 0;
            for (int i = 0; i < NS; i++)
                if (isfinite(ys[i])) px[m] = xs[i], py[m++] = ys[i];
            if (m) {
                px[m] = px[m - 1], py[m++] = T + PH;
                px[m] = px[0], py[m++] = T + PH;
                svg_polygon(&s, px, py, m, "#d62728", 0.10);
            }
        }
        svg_polyline(&s, xs, ys, NS, bd[t].col, 2, bd[t].dash);
    }
    /* The article's two chunk lengths. */
    for (int c = 64; c <= 128; c *= 2) {
        double px = svg_map(&bx, c);
        svg_line(&s, px, T, px, T + PH, "#999999", 1, "3 3");
    }
    svg_text(&s, svg_map(&bx, 64) - 4, T + 14, 10, "end", 0, 0, "#777777", "C = 64");
    svg_text(&s, svg_map(&bx, 128) + 4, T + 14, 10, "start", 0, 0, "#777777", "128");
    /* The article's cases at C = 64: factorised fails at 0.8 and 0.5. */
    for (int a = 0; a < 5; a++) {
        double px = svg_map(&bx, 64), py = svg_map(&by, 1 - alphas[a]);
        int fails = pow(alphas[a], -63) > F16_MAX;
        if (fails) svg_cross(&s, px, py, 4.5, "#d62728", 2);
        else svg_circle(&s, px, py, 4, "#2ca02c", "#ffffff", 1);
    }
    frame(&s, LB, T, PWB, PH);
    svg_text(&s, LB + PWB / 2, T + PH + 40, 13, "middle", 0, 0, "#111111", "chunk length C (log scale)");
    svg_text(&s, LB - 55, T + PH / 2, 13, "middle", -90, 0, "#111111", "\u03b1 (axis is 1 \u2212 \u03b1, log scale)");
    lx = LB;
    ly = T + PH + 68;
    for (size_t t = 0; t < sizeof bd / sizeof bd[0]; t++) {
        double xx = lx + (t % 2) * 200, yy = ly + (t / 2) * 18;
        svg_line(&s, xx, yy, xx + 28, yy, bd[t].col, 2, bd[t].dash);
        svg_text(&s, xx + 33, yy + 4, 10.5, "start", 0, 0, "#111111", "%s", bd[t].name);
    }
    ly += 3 * 18 + 2;
    svg_rect_alpha(&s, lx, ly - 6, 28, 12, "#d62728", 0.15);
    svg_text(&s, lx + 33, ly + 4, 10.5, "start", 0, 0, "#111111", "shaded: the factorised form gives NaN in fp16");
    ly += 18;
    svg_circle(&s, lx + 14, ly, 4, "#2ca02c", "#ffffff", 1);
    svg_cross(&s, lx + 30, ly, 4.5, "#d62728", 2);
    svg_text(&s, lx + 42, ly + 4, 10.5, "start", 0, 0, "#111111",
             "C = 64: 0.99, 0.95, 0.9 ok; 0.8, 0.5 NaN");
    return svg_close(&s, path, err, el);
}

int sgla_cmd_plot(int argc, char **argv)
{
    const char *out = NULL;
    double alpha = 0.9;
    int64_t chunk = 16;
    uint64_t seed = PLOT_SEED;
    int64_t trials = ERR_TRIALS;
    cli_seen seen = {0};
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *v;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(f, "--out")) {
            if (!cli_once(CMD, &seen, f) || !(out = cli_value(CMD, argc, argv, &i))) return 2;
        } else if (!strcmp(f, "--alpha")) {
            if (!cli_once(CMD, &seen, f) || !(v = cli_value(CMD, argc, argv, &i)) ||
                !cli_parse_double(CMD, "--alpha", v, &alpha))
                return 2;
            if (!(alpha > 0.0 && alpha <= 1.0)) {
                fprintf(stderr, "sgla plot: --alpha: %s is not in (0, 1]\n", v);
                return 2;
            }
        } else if (!strcmp(f, "--chunk")) {
            if (!cli_once(CMD, &seen, f) || !(v = cli_value(CMD, argc, argv, &i)) ||
                !cli_parse_i64(CMD, "--chunk", v, &chunk))
                return 2;
            if (chunk < 1 || chunk > 256) {
                fprintf(stderr, "sgla plot: --chunk: %s is not in [1, 256]\n", v);
                return 2;
            }
        } else if (!strcmp(f, "--trials")) {
            if (!cli_once(CMD, &seen, f) || !(v = cli_value(CMD, argc, argv, &i)) ||
                !cli_parse_i64(CMD, "--trials", v, &trials))
                return 2;
            if (trials < 1 || trials > 1000) {
                fprintf(stderr, "sgla plot: --trials: %s is not in [1, 1000]\n", v);
                return 2;
            }
        } else if (!strcmp(f, "--seed")) {
            if (!cli_once(CMD, &seen, f) || !(v = cli_value(CMD, argc, argv, &i)) ||
                !cli_parse_u64(CMD, "--seed", v, &seed))
                return 2;
        } else {
            fprintf(stderr, "sgla plot: unknown option '%s' (try `sgla plot --help`)\n", f);
            return 2;
        }
    }
    if (!out || !*out) {
        fprintf(stderr, "sgla plot: --out DIR is required (try `sgla plot --help`)\n");
        return 2;
    }
    char err[1200], path[1024];
    if (make_dir(out, err, sizeof err)) goto fail;
    if (join(path, sizeof path, out, "decay.svg", err, sizeof err) || plot_decay(path, alpha, (int)chunk, err, sizeof err))
        goto fail;
    printf("wrote %s\n", path);
    if (join(path, sizeof path, out, "error_vs_alpha.svg", err, sizeof err) || plot_error(path, seed, (int)trials, err, sizeof err))
        goto fail;
    printf("wrote %s\n", path);
    if (join(path, sizeof path, out, "bounds.svg", err, sizeof err) || plot_bounds(path, err, sizeof err)) goto fail;
    printf("wrote %s\n", path);
    return 0;
fail:
    fprintf(stderr, "sgla plot: %s\n", err);
    return 1;
}
