// Host emulation of the v5 kernel body (src/cuda/fwd_tc_body5.cuh) for one block:
// shared memory as 16-bit elements, each lane's registers, mma.sync m16n8k16 and
// ldmatrix(.trans) fragment semantics as the PTX ISA describes them; the kernel's
// index expressions (pair split, gray row map, A_s exchange, x4 K fragments,
// double-buffered S_s) copied verbatim; compared with an fp64 token recurrence.
// Not built by CMake:
//   g++ -O2 -o /tmp/emu5 src/cuda/emu/emu5.cpp && /tmp/emu5
// Keep in step with fwd_tc_body5.cuh when its indexing changes.
// STALE since 2026-11-29 (commit 21d061f): it models the body before the
// full-chunk copy slots, the packed K weights, the folded scale and the stmatrix
// stores; those were checked on the device (test_gpu_forward, 319 checks), not here.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <cstdint>
#include <vector>
#include <random>
using namespace std;
static float bf(float x) { uint32_t u; memcpy(&u, &x, 4); u += 0x7fff + ((u >> 16) & 1); u &= 0xffff0000u; float y; memcpy(&y, &u, 4); return y; }
static uint16_t tob(float x) { x = bf(x); uint32_t u; memcpy(&u, &x, 4); return u >> 16; }
static float fromb(uint16_t b) { uint32_t u = (uint32_t)b << 16; float y; memcpy(&y, &u, 4); return y; }
static uint32_t pack(float lo, float hi) { return tob(lo) | ((uint32_t)tob(hi) << 16); }
static void unpack(uint32_t x, float &lo, float &hi) { lo = fromb(x & 0xffff); hi = fromb(x >> 16); }
static vector<uint16_t> sm; // element-addressed
static void st32(int e, uint32_t x) { sm[e] = x & 0xffff; sm[e + 1] = x >> 16; }
// ldmatrix x4 for a warp; addr[l] = element index of row start
static void ldm(const int *addr, uint32_t out[32][4], int trans) {
    for (int j = 0; j < 4; j++) { float M[8][8];
        for (int r = 0; r < 8; r++) { if (addr[8*j+r] % 8) { printf("ldmatrix row not 16B aligned\n"); exit(1); } for (int c = 0; c < 8; c++) M[r][c] = fromb(sm[addr[8*j+r] + c]); }
        for (int t = 0; t < 32; t++) { int g = t / 4, q = t % 4; out[t][j] = trans ? pack(M[2*q][g], M[2*q+1][g]) : pack(M[g][2*q], M[g][2*q+1]); } }
}
// warp mma: d[32][4] += A(a[32][4]) B(b0[32], b1[32])
static void mma(float d[32][4], uint32_t a[32][4], const uint32_t *b0, const uint32_t *b1) {
    double A[16][16], B[16][8]; float lo, hi;
    for (int t = 0; t < 32; t++) { int g = t / 4, q = t % 4;
        unpack(a[t][0], lo, hi); A[g][2*q] = lo; A[g][2*q+1] = hi; unpack(a[t][1], lo, hi); A[g+8][2*q] = lo; A[g+8][2*q+1] = hi;
        unpack(a[t][2], lo, hi); A[g][2*q+8] = lo; A[g][2*q+9] = hi; unpack(a[t][3], lo, hi); A[g+8][2*q+8] = lo; A[g+8][2*q+9] = hi;
        unpack(b0[t], lo, hi); B[2*q][g] = lo; B[2*q+1][g] = hi; unpack(b1[t], lo, hi); B[2*q+8][g] = lo; B[2*q+9][g] = hi; }
    for (int t = 0; t < 32; t++) { int g = t / 4, q = t % 4; double s[4] = {0, 0, 0, 0};
        for (int k = 0; k < 16; k++) { s[0] += A[g][k]*B[k][2*q]; s[1] += A[g][k]*B[k][2*q+1]; s[2] += A[g+8][k]*B[k][2*q]; s[3] += A[g+8][k]*B[k][2*q+1]; }
        for (int e = 0; e < 4; e++) d[t][e] += (float)s[e]; }
}
static int run(int KD, int BV, int RW, int CW, int SDB, int T, int V, int vblk, int gmode, unsigned seed) {
    const int P1C = BV/2, P2R = KD/RW, P2C = BV/CW, LDQ = KD+8, LDV = BV+8, LDA = 72, SE = 2*64*LDQ + 64*LDV, NSB = SDB ? 2 : 1;
    const int g_off = 2*SE, S_off = g_off + 2*64*2, O_off = S_off + NSB*KD*LDV, A_off = O_off + 64*LDV;
    sm.assign(A_off + 64*LDA + 16, 0x7fc0);
    mt19937 rng(seed); normal_distribution<double> nd(0, 1); uniform_real_distribution<double> ud(0, 1);
    vector<float> q(T*KD), k(T*KD), v(T*V), g(T), h0(KD*V);
    for (auto &x : q) x = bf(nd(rng)); for (auto &x : k) x = bf(nd(rng)); for (auto &x : v) x = bf(nd(rng));
    double gam = gmode == 1 ? -0.05 : 0;
    for (auto &x : g) x = gmode == 2 ? -0.3*ud(rng) : gam; for (auto &x : h0) x = 0.5*nd(rng);
    float scale = 1.0f/sqrtf((float)KD); const float LOG2E = 1.4426950408889634f; const float gl2 = (float)gam*LOG2E;
    vector<double> Sr(KD*V), oref(T*V);
    for (int i = 0; i < KD*V; i++) Sr[i] = h0[i];
    for (int t = 0; t < T; t++) { double a = exp((double)g[t]);
        for (int i = 0; i < KD; i++) for (int j = 0; j < V; j++) Sr[i*V+j] = a*Sr[i*V+j] + (double)k[t*KD+i]*v[t*V+j];
        for (int j = 0; j < V; j++) { double s = 0; for (int i = 0; i < KD; i++) s += (double)q[t*KD+i]*Sr[i*V+j]; oref[t*V+j] = scale*s; } }
    vector<float> o(T*V, NAN);
    const int v0 = vblk*BV;
    static float S[8][32][16][16][4]; // [warp][lane][mi][nj][e]
    static float bw[8][64];
    for (int warp = 0; warp < 8; warp++) for (int lane = 0; lane < 32; lane++) { int gid = lane >> 2, tig = lane & 3, rw = warp / CW, cw = warp % CW, kr0 = rw*P2R, cc0 = cw*P2C;
        for (int mi = 0; mi < P2R/16; mi++) for (int nj = 0; nj < P2C/8; nj++) { int r = kr0 + 16*mi + gid, c = cc0 + 8*nj + 2*tig;
            S[warp][lane][mi][nj][0] = h0[r*V+v0+c]; S[warp][lane][mi][nj][1] = h0[r*V+v0+c+1]; S[warp][lane][mi][nj][2] = h0[(r+8)*V+v0+c]; S[warp][lane][mi][nj][3] = h0[(r+8)*V+v0+c+1]; } }
    auto storeS = [&](int base) { for (int warp = 0; warp < 8; warp++) for (int lane = 0; lane < 32; lane++) { int gid = lane >> 2, tig = lane & 3, rw = warp / CW, cw = warp % CW, kr0 = rw*P2R, cc0 = cw*P2C;
        for (int mi = 0; mi < P2R/16; mi++) for (int nj = 0; nj < P2C/8; nj++) { int r = kr0 + 16*mi + gid, c = cc0 + 8*nj + 2*tig;
            st32(base + r*LDV + c, pack(S[warp][lane][mi][nj][0], S[warp][lane][mi][nj][1])); st32(base + (r+8)*LDV + c, pack(S[warp][lane][mi][nj][2], S[warp][lane][mi][nj][3])); } } };
    storeS(S_off);
    const int len = T, nchunks = (len + 63)/64;
    for (int c = 0; c < nchunks; c++) {
        const int s = c & 1; const int tk0 = c*64, cl = len - tk0 < 64 ? len - tk0 : 64;
        const int qs = s*SE, ks = qs + 64*LDQ, vs = ks + 64*LDQ;
        for (int r = 0; r < 64; r++) { for (int e = 0; e < KD; e++) { sm[qs + r*LDQ + e] = r < cl ? tob(q[(tk0+r)*KD+e]) : 0; sm[ks + r*LDQ + e] = r < cl ? tob(k[(tk0+r)*KD+e]) : 0; }
            for (int e = 0; e < BV; e++) sm[vs + r*LDV + e] = r < cl ? tob(v[(tk0+r)*V+v0+e]) : 0; }
        const int Sr_off = S_off + (SDB ? s*KD*LDV : 0);
        for (int w = 0; w < 8; w++) { float run = 0; for (int i = 0; i < 64; i++) {
            if (gmode == 2) { run += (tk0+i < T ? g[tk0+i] : 0.f)*LOG2E; bw[w][i] = run; } else if (gmode == 1) bw[w][i] = gl2*(float)(i+1 < cl ? i+1 : cl); else bw[w][i] = 0; } }
        static float acc[8][32][8][4];
        // phase 1 part A: per warp, up to the A_s stores (before the pair barrier)
        for (int warp = 0; warp < 8; warp++) {
            const int pr = warp >> 1, cg = warp & 1, r1 = pr ^ (pr >> 1), oc0 = cg*P1C, qrow = 16*r1, R = r1;
            int qa[32], kq[32]; for (int lane = 0; lane < 32; lane++) { qa[lane] = qs + (qrow + (lane & 15))*LDQ + (lane >> 4)*8; kq[lane] = ks + (8*cg + (lane & 7))*LDQ + (lane >> 3)*8; }
            int sb[32]; for (int lane = 0; lane < 32; lane++) sb[lane] = Sr_off + ((lane & 7) + ((lane >> 3) & 1)*8)*LDV + oc0 + (lane >> 4)*8;
            for (int l = 0; l < 32; l++) for (int j = 0; j < P1C/8; j++) for (int e = 0; e < 4; e++) acc[warp][l][j][e] = 0;
            float sc[4][32][4] = {}; uint32_t kf[4][32][4];
            for (int kk = 0; kk < KD/16; kk++) {
                uint32_t a[32][4]; int ad[32]; for (int l = 0; l < 32; l++) ad[l] = qa[l] + kk*16; ldm(ad, a, 0);
                if ((kk & 1) == 0) for (int kb = 0; kb <= R; kb++) { for (int l = 0; l < 32; l++) ad[l] = kq[l] + kb*16*LDQ + kk*16; ldm(ad, kf[kb], 0); }
                for (int kb = 0; kb <= R; kb++) { uint32_t b0[32], b1[32]; for (int l = 0; l < 32; l++) { b0[l] = kf[kb][l][2*(kk&1)]; b1[l] = kf[kb][l][2*(kk&1)+1]; } mma(sc[kb], a, b0, b1); }
                for (int j = 0; j < P1C/16; j++) { uint32_t bb[32][4]; for (int l = 0; l < 32; l++) ad[l] = sb[l] + kk*16*LDV + j*16; ldm(ad, bb, 1);
                    uint32_t b0[32], b1[32], b2[32], b3[32]; for (int l = 0; l < 32; l++) { b0[l] = bb[l][0]; b1[l] = bb[l][1]; b2[l] = bb[l][2]; b3[l] = bb[l][3]; }
                    float t0[32][4], t1[32][4]; for (int l = 0; l < 32; l++) for (int e = 0; e < 4; e++) { t0[l][e] = acc[warp][l][2*j][e]; t1[l][e] = acc[warp][l][2*j+1][e]; }
                    mma(t0, a, b0, b1); mma(t1, a, b2, b3);
                    for (int l = 0; l < 32; l++) for (int e = 0; e < 4; e++) { acc[warp][l][2*j][e] = t0[l][e]; acc[warp][l][2*j+1][e] = t1[l][e]; } }
            }
            for (int lane = 0; lane < 32; lane++) { int gid = lane >> 2, tig = lane & 3; const int i0 = qrow + gid, i1 = i0 + 8; float bi0 = 0, bi1 = 0;
                if (gmode) { bi0 = bw[warp][i0]; bi1 = bw[warp][i1]; }
                for (int kb = 0; kb <= R; kb++) { const int j0 = 16*kb + 8*cg + 2*tig, j1 = j0 + 1; float e0, e1, e2, e3; float *x = sc[kb][lane];
                    if (gmode) { float bj0 = bw[warp][j0], bj1 = bw[warp][j1];
                        e0 = j0 <= i0 ? x[0]*exp2f(bi0-bj0) : 0.f; e1 = j1 <= i0 ? x[1]*exp2f(bi0-bj1) : 0.f; e2 = j0 <= i1 ? x[2]*exp2f(bi1-bj0) : 0.f; e3 = j1 <= i1 ? x[3]*exp2f(bi1-bj1) : 0.f; }
                    else { e0 = j0 <= i0 ? x[0] : 0.f; e1 = j1 <= i0 ? x[1] : 0.f; e2 = j0 <= i1 ? x[2] : 0.f; e3 = j1 <= i1 ? x[3] : 0.f; }
                    st32(A_off + i0*LDA + j0, pack(e0, e1)); st32(A_off + i1*LDA + j0, pack(e2, e3)); }
                if (gmode) { float w0 = exp2f(bi0), w1 = exp2f(bi1); for (int j = 0; j < P1C/8; j++) { acc[warp][lane][j][0] *= w0; acc[warp][lane][j][1] *= w0; acc[warp][lane][j][2] *= w1; acc[warp][lane][j][3] *= w1; } } }
        }
        // after the pair barrier: A.V and o
        for (int warp = 0; warp < 8; warp++) {
            const int pr = warp >> 1, cg = warp & 1, r1 = pr ^ (pr >> 1), oc0 = cg*P1C, qrow = 16*r1, R = r1;
            int aa[32], vb[32], ad[32]; for (int lane = 0; lane < 32; lane++) { aa[lane] = A_off + (qrow + (lane & 15))*LDA + (lane >> 4)*8; vb[lane] = vs + ((lane & 7) + ((lane >> 3) & 1)*8)*LDV + oc0 + (lane >> 4)*8; }
            for (int kb = 0; kb <= R; kb++) { uint32_t af[32][4]; for (int l = 0; l < 32; l++) ad[l] = aa[l] + kb*16; ldm(ad, af, 0);
                for (int j = 0; j < P1C/16; j++) { uint32_t bv[32][4]; for (int l = 0; l < 32; l++) ad[l] = vb[l] + kb*16*LDV + j*16; ldm(ad, bv, 1);
                    uint32_t b0[32], b1[32], b2[32], b3[32]; for (int l = 0; l < 32; l++) { b0[l] = bv[l][0]; b1[l] = bv[l][1]; b2[l] = bv[l][2]; b3[l] = bv[l][3]; }
                    float t0[32][4], t1[32][4]; for (int l = 0; l < 32; l++) for (int e = 0; e < 4; e++) { t0[l][e] = acc[warp][l][2*j][e]; t1[l][e] = acc[warp][l][2*j+1][e]; }
                    mma(t0, af, b0, b1); mma(t1, af, b2, b3);
                    for (int l = 0; l < 32; l++) for (int e = 0; e < 4; e++) { acc[warp][l][2*j][e] = t0[l][e]; acc[warp][l][2*j+1][e] = t1[l][e]; } } }
            for (int lane = 0; lane < 32; lane++) { int gid = lane >> 2, tig = lane & 3; const int i0 = qrow + gid, i1 = i0 + 8;
                for (int j = 0; j < P1C/8; j++) { const int cc = oc0 + 8*j + 2*tig; st32(O_off + i0*LDV + cc, pack(acc[warp][lane][j][0]*scale, acc[warp][lane][j][1]*scale)); st32(O_off + i1*LDV + cc, pack(acc[warp][lane][j][2]*scale, acc[warp][lane][j][3]*scale)); } }
            for (int lane = 0; lane < 32; lane++) for (int i = lane; i < 16*(P1C/8); i += 32) { const int rr = qrow + i/(P1C/8), c8 = oc0 + (i % (P1C/8))*8;
                if (rr < cl) for (int e = 0; e < 8; e++) o[(tk0+rr)*V + v0 + c8 + e] = fromb(sm[O_off + rr*LDV + c8 + e]); }
        }
        // phase 2
        for (int warp = 0; warp < 8; warp++) {
            const int rw = warp / CW, cw = warp % CW, kr0 = rw*P2R, cc0 = cw*P2C; const float bC = gmode ? bw[warp][63] : 0.f;
            for (int l = 0; l < 32; l++) if (gmode) { float d = exp2f(bC); for (int mi = 0; mi < P2R/16; mi++) for (int nj = 0; nj < P2C/8; nj++) for (int e = 0; e < 4; e++) S[warp][l][mi][nj][e] *= d; }
            int kab[32], v2b[32], ad[32]; for (int lane = 0; lane < 32; lane++) { kab[lane] = ks + ((lane & 7) + (lane >> 4)*8)*LDQ + kr0 + ((lane >> 3) & 1)*8; v2b[lane] = vs + ((lane & 7) + ((lane >> 3) & 1)*8)*LDV + cc0 + (lane >> 4)*8; }
            for (int kk = 0; kk < 4; kk++) { uint32_t vf[8][32][4]; for (int j = 0; j < P2C/16; j++) { for (int l = 0; l < 32; l++) ad[l] = v2b[l] + kk*16*LDV + j*16; ldm(ad, vf[j], 1); }
                for (int mi = 0; mi < P2R/16; mi++) { uint32_t ka[32][4]; for (int l = 0; l < 32; l++) ad[l] = kab[l] + kk*16*LDQ + mi*16; ldm(ad, ka, 1);
                    for (int l = 0; l < 32; l++) if (gmode) { int tig = l & 3; const int ta = 16*kk + 2*tig; float w0 = exp2f(bC - bw[warp][ta]), w1 = exp2f(bC - bw[warp][ta+1]), w2 = exp2f(bC - bw[warp][ta+8]), w3 = exp2f(bC - bw[warp][ta+9]); float x, y;
                        unpack(ka[l][0], x, y); ka[l][0] = pack(x*w0, y*w1); unpack(ka[l][1], x, y); ka[l][1] = pack(x*w0, y*w1); unpack(ka[l][2], x, y); ka[l][2] = pack(x*w2, y*w3); unpack(ka[l][3], x, y); ka[l][3] = pack(x*w2, y*w3); }
                    for (int j = 0; j < P2C/16; j++) { uint32_t b0[32], b1[32], b2[32], b3[32]; for (int l = 0; l < 32; l++) { b0[l] = vf[j][l][0]; b1[l] = vf[j][l][1]; b2[l] = vf[j][l][2]; b3[l] = vf[j][l][3]; }
                        float t0[32][4], t1[32][4]; for (int l = 0; l < 32; l++) for (int e = 0; e < 4; e++) { t0[l][e] = S[warp][l][mi][2*j][e]; t1[l][e] = S[warp][l][mi][2*j+1][e]; }
                        mma(t0, ka, b0, b1); mma(t1, ka, b2, b3);
                        for (int l = 0; l < 32; l++) for (int e = 0; e < 4; e++) { S[warp][l][mi][2*j][e] = t0[l][e]; S[warp][l][mi][2*j+1][e] = t1[l][e]; } } } }
        }
        storeS(SDB ? S_off + (s ^ 1)*KD*LDV : S_off);
    }
    double num = 0, den = 0, hn = 0, hd = 0; int nan = 0;
    for (int t = 0; t < T; t++) for (int j = v0; j < v0+BV; j++) { double x = o[t*V+j]; if (x != x) nan++; num += (x-oref[t*V+j])*(x-oref[t*V+j]); den += oref[t*V+j]*oref[t*V+j]; }
    for (int warp = 0; warp < 8; warp++) for (int lane = 0; lane < 32; lane++) { int gid = lane >> 2, tig = lane & 3, rw = warp / CW, cw = warp % CW, kr0 = rw*P2R, cc0 = cw*P2C;
        for (int mi = 0; mi < P2R/16; mi++) for (int nj = 0; nj < P2C/8; nj++) { int r = kr0 + 16*mi + gid, cc = cc0 + 8*nj + 2*tig;
            double ref[4] = {Sr[r*V+v0+cc], Sr[r*V+v0+cc+1], Sr[(r+8)*V+v0+cc], Sr[(r+8)*V+v0+cc+1]};
            for (int e = 0; e < 4; e++) { hn += (S[warp][lane][mi][nj][e]-ref[e])*(S[warp][lane][mi][nj][e]-ref[e]); hd += ref[e]*ref[e]; } } }
    double rel = sqrt(num/den), hrel = sqrt(hn/hd); int ok = !nan && rel < 8e-3 && hrel < 8e-3;
    printf("%s K=%d BV=%d %dx%d SDB=%d V=%d vblk=%d T=%d gate=%d: o rel %.2e (nan %d) ht rel %.2e\n", ok ? "ok  " : "FAIL", KD, BV, RW, CW, SDB, V, vblk, T, gmode, rel, nan, hrel);
    return ok;
}
int main() {
    int bad = 0;
    int cf[][5] = {{64, 64, 4, 2, 1}, {128, 64, 4, 2, 1}, {128, 128, 4, 2, 1}, {256, 64, 8, 1, 0}};
    for (auto &x : cf) for (int gm = 0; gm < 3; gm++) bad += !run(x[0], x[1], x[2], x[3], x[4], 150, x[1], 0, gm, 3 + gm);
    bad += !run(128, 64, 4, 2, 1, 200, 128, 1, 2, 17);
    bad += !run(256, 64, 8, 1, 0, 65, 256, 2, 1, 19);
    printf("%d failed\n", bad); return bad != 0;
}
