// Host emulation of the v6 kernel body (src/cuda/fwd_tc_body6.cuh) for one block
// (one sequence x head x V-block): shared memory as bytes, each thread's registers,
// and the semantics of wgmma.mma_async (no-swizzle canonical K-major / MN-major
// layouts decoded from the 64-bit descriptors), its D and register-A fragments and
// ldmatrix(.trans), as the PTX ISA describes them.  The kernel's index expressions
// are copied here verbatim; the result is compared with an fp64 token recurrence.
// It checks the kernel's index math against that reading of the ISA, not the
// hardware: the device run is still the test.  Not built by CMake:
//   g++ -O2 -o /tmp/emu6 src/cuda/emu/emu6.cpp && /tmp/emu6
// Keep in step with fwd_tc_body6.cuh when its indexing changes.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <cstdint>
#include <vector>
#include <random>
using namespace std;

static float bf(float x) { uint32_t u; memcpy(&u, &x, 4); u += 0x7fff + ((u >> 16) & 1); u &= 0xffff0000u; float y; memcpy(&y, &u, 4); return y; }
static uint16_t tobits(float x) { x = bf(x); uint32_t u; memcpy(&u, &x, 4); return u >> 16; }
static float frombits(uint16_t b) { uint32_t u = (uint32_t)b << 16; float y; memcpy(&y, &u, 4); return y; }
static uint32_t pack(float lo, float hi) { return tobits(lo) | ((uint32_t)tobits(hi) << 16); }
static void unpack(uint32_t x, float &lo, float &hi) { lo = frombits(x & 0xffff); hi = frombits(x >> 16); }

struct Cfg { int KD, BV; };
static vector<uint8_t> sm;
static float smf(uint32_t addr) { uint16_t b; memcpy(&b, &sm[addr], 2); return frombits(b); }

static uint64_t desc(uint32_t saddr, uint32_t lbo, uint32_t sbo) {
    return (uint64_t)((saddr & 0x3FFFFu) >> 4) | ((uint64_t)((lbo & 0x3FFFFu) >> 4) << 16) | ((uint64_t)((sbo & 0x3FFFFu) >> 4) << 32);
}
static void dec(uint64_t d, uint32_t &st, uint32_t &lbo, uint32_t &sbo) {
    st = (uint32_t)(d & 0x3FFF) << 4; lbo = (uint32_t)((d >> 16) & 0x3FFF) << 4; sbo = (uint32_t)((d >> 32) & 0x3FFF) << 4;
    if ((d >> 14) & 3) { printf("desc carry into bits 14-15!\n"); exit(1); }
}
// K-major operand element (row r of 64/N rows, k of 16)
static float kmaj(uint64_t d, int r, int k) { uint32_t st, l, s; dec(d, st, l, s); return smf(st + (r / 8) * s + (k / 8) * l + (r % 8) * 16 + (k % 8) * 2); }
// MN-major operand element (k of 16, n): canonical ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
static float mnmaj(uint64_t d, int k, int n) { uint32_t st, l, s; dec(d, st, l, s); return smf(st + (n / 8) * s + (k / 8) * l + (k % 8) * 16 + (n % 8) * 2); }

// D fragment <-> matrix, per warpgroup: thread t (0..127)
static void d_scatter(float *const *regs, const vector<double> &D, int N) {
    for (int t = 0; t < 128; t++) { int w = t / 32, l = t % 32, g = l / 4, q = l % 4;
        for (int j = 0; j < N / 8; j++) {
            regs[t][4*j+0] = (float)D[(16*w+g)*N + 8*j+2*q]; regs[t][4*j+1] = (float)D[(16*w+g)*N + 8*j+2*q+1];
            regs[t][4*j+2] = (float)D[(16*w+g+8)*N + 8*j+2*q]; regs[t][4*j+3] = (float)D[(16*w+g+8)*N + 8*j+2*q+1]; } }
}
static void d_gather(float *const *regs, vector<double> &D, int N) {
    D.assign(64 * N, 0);
    for (int t = 0; t < 128; t++) { int w = t / 32, l = t % 32, g = l / 4, q = l % 4;
        for (int j = 0; j < N / 8; j++) {
            D[(16*w+g)*N + 8*j+2*q] = regs[t][4*j+0]; D[(16*w+g)*N + 8*j+2*q+1] = regs[t][4*j+1];
            D[(16*w+g+8)*N + 8*j+2*q] = regs[t][4*j+2]; D[(16*w+g+8)*N + 8*j+2*q+1] = regs[t][4*j+3]; } }
}
// D += A(smem K-major) B(smem, tb) 
static void wg_ss(float *const *regs, int N, uint64_t da, uint64_t db, int tb) {
    vector<double> D; d_gather(regs, D, N);
    for (int m = 0; m < 64; m++) for (int n = 0; n < N; n++) { double s = 0;
        for (int k = 0; k < 16; k++) s += (double)kmaj(da, m, k) * (tb ? mnmaj(db, k, n) : kmaj(db, n, k));
        D[m*N+n] += s; }
    d_scatter(regs, D, N);
}
// D += A(registers: a[t][4]) B(smem N-major)
static void wg_rs(float *const *regs, int N, uint32_t (*a)[4], uint64_t db) {
    double A[64][16];
    for (int t = 0; t < 128; t++) { int w = t / 32, l = t % 32, g = l / 4, q = l % 4; float lo, hi;
        unpack(a[t][0], lo, hi); A[16*w+g][2*q] = lo; A[16*w+g][2*q+1] = hi;
        unpack(a[t][1], lo, hi); A[16*w+g+8][2*q] = lo; A[16*w+g+8][2*q+1] = hi;
        unpack(a[t][2], lo, hi); A[16*w+g][2*q+8] = lo; A[16*w+g][2*q+9] = hi;
        unpack(a[t][3], lo, hi); A[16*w+g+8][2*q+8] = lo; A[16*w+g+8][2*q+9] = hi; }
    vector<double> D; d_gather(regs, D, N);
    for (int m = 0; m < 64; m++) for (int n = 0; n < N; n++) { double s = 0;
        for (int k = 0; k < 16; k++) s += A[m][k] * mnmaj(db, k, n);
        D[m*N+n] += s; }
    d_scatter(regs, D, N);
}
// ldmatrix.x4(.trans) for one warp: addr[32]; out[32][4]
static void ldm(const uint32_t *addr, uint32_t out[32][4], int trans) {
    for (int j = 0; j < 4; j++) { float M[8][8];
        for (int r = 0; r < 8; r++) for (int c = 0; c < 8; c++) M[r][c] = smf(addr[8*j+r] + 2*c);
        for (int t = 0; t < 32; t++) { int g = t / 4, q = t % 4;
            out[t][j] = trans ? pack(M[2*q][g], M[2*q+1][g]) : pack(M[g][2*q], M[g][2*q+1]); } }
}

static int run(Cfg cf, int T, int V, int vblk, int gmode, unsigned seed) {
    const int KD = cf.KD, BV = cf.BV, N1 = BV / 2, MT = KD / 64;
    const int QB = 64*KD*2, VB = 64*BV*2, STB = 2*QB + VB, LDO = BV + 8;
    const size_t SMEM = (size_t)2*STB + (size_t)KD*BV*2 + 64*LDO*2 + 2*64*4 + 8*64*4;
    sm.assign(SMEM, 0xAB); // garbage
    mt19937 rng(seed); normal_distribution<double> nd(0, 1); uniform_real_distribution<double> ud(0, 1);
    vector<float> q(T*KD), k(T*KD), v(T*V), g(T), h0(KD*V);
    for (auto &x : q) x = bf(nd(rng)); for (auto &x : k) x = bf(nd(rng)); for (auto &x : v) x = bf(nd(rng));
    for (auto &x : g) x = gmode == 2 ? -0.3 * ud(rng) : 0; for (auto &x : h0) x = 0.5 * nd(rng);
    double gam = gmode == 1 ? -0.05 : 0; if (gmode == 1) for (auto &x : g) x = gam;
    float scale = 1.0f / sqrtf((float)KD);
    // reference (fp64 recurrence)
    vector<double> Sr(KD*V), oref(T*V);
    for (int i = 0; i < KD*V; i++) Sr[i] = h0[i];
    for (int t = 0; t < T; t++) { double a = exp((double)g[t]);
        for (int i = 0; i < KD; i++) for (int j = 0; j < V; j++) Sr[i*V+j] = a*Sr[i*V+j] + (double)k[t*KD+i]*v[t*V+j];
        for (int j = 0; j < V; j++) { double s = 0; for (int i = 0; i < KD; i++) s += (double)q[t*KD+i]*Sr[i*V+j]; oref[t*V+j] = scale*s; } }
    vector<float> o(T*V, NAN);
    const int v0 = vblk * BV;
    const float LOG2E = 1.4426950408889634f;
    const float gl2 = gmode == 1 ? (float)gam * LOG2E : 0.f;
    // registers
    static float S[256][4][32]; static float acc[256][32]; static float sc[256][32]; static uint32_t af[256][4][4]; static uint32_t kf[256][4][4][4];
    static float bwv[8][64];
    // S init
    for (int tid = 0; tid < 256; tid++) { int warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3, wg = warp >> 2, wl = warp & 3;
        for (int mt = 0; mt < MT; mt++) for (int j = 0; j < N1/8; j++) { int r = 64*mt + 16*wl + gid, c = wg*N1 + 8*j + 2*tig;
            S[tid][mt][4*j+0] = h0[r*V + v0 + c]; S[tid][mt][4*j+1] = h0[r*V + v0 + c+1];
            S[tid][mt][4*j+2] = h0[(r+8)*V + v0 + c]; S[tid][mt][4*j+3] = h0[(r+8)*V + v0 + c+1]; } }
    const uint32_t st_u32 = 0, S_u32 = 2*STB, O_off = S_u32 + KD*BV*2;
    auto store_S = [&]() {
        for (int tid = 0; tid < 256; tid++) { int warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3, wg = warp >> 2, wl = warp & 3;
            for (int mt = 0; mt < MT; mt++) for (int j = 0; j < N1/8; j++) {
                const int r = 64*mt + 16*wl + gid, nb = (wg*N1)/8 + j;
                uint32_t p0 = S_u32 + ((r >> 3)*(BV/8) + nb)*128 + (r & 7)*16 + tig*4;
                uint32_t x = pack(S[tid][mt][4*j+0], S[tid][mt][4*j+1]); memcpy(&sm[p0], &x, 4);
                x = pack(S[tid][mt][4*j+2], S[tid][mt][4*j+3]); memcpy(&sm[p0 + (BV/8)*128], &x, 4); } }
    };
    store_S();
    const int len = T, nchunks = (len + 63) / 64;
    auto load = [&](int cc, int ss) {
        const int tk0 = cc*64, cl_ = len - tk0 < 64 ? len - tk0 : 64;
        const uint32_t qs_ = st_u32 + ss*STB, ks_ = qs_ + QB, vs_ = ks_ + QB;
        for (int tid = 0; tid < 256; tid++) {
            for (int i_ = tid; i_ < 64*KD/8; i_ += 256) { const int r_ = (i_ / KD)*8 + (i_ & 7), c8_ = ((i_ >> 3) % (KD/8))*8; const int ok = r_ < cl_;
                for (int e = 0; e < 8; e++) { uint16_t bq = ok ? tobits(q[(tk0+r_)*KD + c8_ + e]) : 0, bk = ok ? tobits(k[(tk0+r_)*KD + c8_ + e]) : 0;
                    memcpy(&sm[qs_ + i_*16 + 2*e], &bq, 2); memcpy(&sm[ks_ + i_*16 + 2*e], &bk, 2); } }
            for (int i_ = tid; i_ < 64*BV/8; i_ += 256) { const int r_ = (i_ / BV)*8 + (i_ & 7), c8_ = ((i_ >> 3) % (BV/8))*8; const int ok = r_ < cl_;
                for (int e = 0; e < 8; e++) { uint16_t bv = ok ? tobits(v[(tk0+r_)*V + v0 + c8_ + e]) : 0; memcpy(&sm[vs_ + i_*16 + 2*e], &bv, 2); } } }
    };
    for (int c = 0; c < nchunks; c++) {
        const int s = c & 1;
        load(c, s);
        const int cl = len - c*64 < 64 ? len - c*64 : 64;
        const uint32_t qs = st_u32 + s*STB, ks = qs + QB, vs = ks + QB;
        // b per warp (same for all warps)
        for (int w = 0; w < 8; w++) { float run = 0; for (int i = 0; i < 64; i++) {
            if (gmode == 2) { run += (c*64+i < T ? g[c*64+i] : 0.f) * LOG2E; bwv[w][i] = run; }
            else if (gmode == 1) bwv[w][i] = gl2 * (float)(i + 1 < cl ? i + 1 : cl); else bwv[w][i] = 0; } }
        for (int wg = 0; wg < 2; wg++) {
            const uint64_t dQ = desc(qs, 128, KD*16), dK = desc(ks, 128, KD*16), dV = desc(vs + wg*N1*16, BV*16, 128), dS = desc(S_u32 + wg*N1*16, BV*16, 128);
            float *accp[128], *scp[128], *Sp[4][128];
            for (int t = 0; t < 128; t++) { accp[t] = acc[wg*128+t]; scp[t] = sc[wg*128+t]; for (int mt = 0; mt < MT; mt++) Sp[mt][t] = S[wg*128+t][mt]; }
            for (int t = 0; t < 128; t++) { for (int e = 0; e < 32; e++) acc[wg*128+t][e] = sc[wg*128+t][e] = 0; }
            for (int kk = 0; kk < KD/16; kk++) wg_ss(accp, N1, dQ + (uint64_t)(kk*16), dS + (uint64_t)(kk*2*BV), 1);
            for (int kk = 0; kk < KD/16; kk++) wg_ss(scp, 64, dQ + (uint64_t)(kk*16), dK + (uint64_t)(kk*16), 0);
            for (int t = 0; t < 128; t++) { int tid = wg*128 + t, warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3, wl = warp & 3;
                float *bw = bwv[warp]; const int i0 = 16*wl + gid, i1 = i0 + 8;
                float bi0 = 0, bi1 = 0;
                if (gmode) { bi0 = bw[i0]; bi1 = bw[i1]; float w0 = exp2f(bi0), w1 = exp2f(bi1);
                    for (int j = 0; j < N1/8; j++) { acc[tid][4*j+0] *= w0; acc[tid][4*j+1] *= w0; acc[tid][4*j+2] *= w1; acc[tid][4*j+3] *= w1; } }
                for (int j = 0; j < 8; j++) { const int j0 = 8*j + 2*tig, j1 = j0 + 1; float e0, e1, e2, e3; float *scc = sc[tid];
                    if (gmode) { float bj0 = bw[j0], bj1 = bw[j1];
                        e0 = j0 <= i0 ? scc[4*j+0]*exp2f(bi0-bj0) : 0.f; e1 = j1 <= i0 ? scc[4*j+1]*exp2f(bi0-bj1) : 0.f;
                        e2 = j0 <= i1 ? scc[4*j+2]*exp2f(bi1-bj0) : 0.f; e3 = j1 <= i1 ? scc[4*j+3]*exp2f(bi1-bj1) : 0.f; }
                    else { e0 = j0 <= i0 ? scc[4*j+0] : 0.f; e1 = j1 <= i0 ? scc[4*j+1] : 0.f; e2 = j0 <= i1 ? scc[4*j+2] : 0.f; e3 = j1 <= i1 ? scc[4*j+3] : 0.f; }
                    af[tid][j >> 1][2*(j & 1) + 0] = pack(e0, e1); af[tid][j >> 1][2*(j & 1) + 1] = pack(e2, e3); } }
            for (int kk = 0; kk < 4; kk++) { uint32_t a[128][4]; for (int t = 0; t < 128; t++) for (int e = 0; e < 4; e++) a[t][e] = af[wg*128+t][kk][e];
                wg_rs(accp, N1, a, dV + (uint64_t)(kk*2*BV)); }
            // phase 2
            const float bC = gmode ? bwv[wg*4][63] : 0.f;
            for (int t = 0; t < 128; t++) { int tid = wg*128+t; if (gmode) { float d = exp2f(bC); for (int mt = 0; mt < MT; mt++) for (int e = 0; e < N1/2; e++) S[tid][mt][e] *= d; } }
            for (int wl = 0; wl < 4; wl++) { int warp = wg*4 + wl; float *bw = bwv[warp];
                for (int kk = 0; kk < 4; kk++) for (int mt = 0; mt < MT; mt++) {
                    uint32_t addr[32], out[32][4];
                    for (int lane = 0; lane < 32; lane++) { const int jm = lane >> 3, kr = (jm >> 1)*8 + (lane & 7), fo = (jm & 1)*8;
                        const int key = 16*kk + kr, f = 64*mt + 16*wl + fo;
                        addr[lane] = ks + ((key >> 3)*(KD/8) + (f >> 3))*128 + (key & 7)*16; }
                    ldm(addr, out, 1);
                    for (int lane = 0; lane < 32; lane++) { int tig = lane & 3, tid = warp*32 + lane; uint32_t *ka = kf[tid][mt][kk];
                        for (int e = 0; e < 4; e++) ka[e] = out[lane][e];
                        if (gmode) { const int ta = 16*kk + 2*tig; float w0 = exp2f(bC - bw[ta]), w1 = exp2f(bC - bw[ta+1]), w2 = exp2f(bC - bw[ta+8]), w3 = exp2f(bC - bw[ta+9]);
                            float x, y; unpack(ka[0], x, y); ka[0] = pack(x*w0, y*w1); unpack(ka[1], x, y); ka[1] = pack(x*w0, y*w1);
                            unpack(ka[2], x, y); ka[2] = pack(x*w2, y*w3); unpack(ka[3], x, y); ka[3] = pack(x*w2, y*w3); } } } }
            for (int mt = 0; mt < MT; mt++) for (int kk = 0; kk < 4; kk++) { uint32_t a[128][4]; for (int t = 0; t < 128; t++) for (int e = 0; e < 4; e++) a[t][e] = kf[wg*128+t][mt][kk][e];
                wg_rs(Sp[mt], N1, a, dV + (uint64_t)(kk*2*BV)); }
            // o
            for (int t = 0; t < 128; t++) { int tid = wg*128+t, warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3, wl = warp & 3; const int i0 = 16*wl + gid, i1 = i0 + 8;
                for (int j = 0; j < N1/8; j++) { const int cc = wg*N1 + 8*j + 2*tig;
                    uint32_t x = pack(acc[tid][4*j+0]*scale, acc[tid][4*j+1]*scale); memcpy(&sm[O_off + (i0*LDO + cc)*2], &x, 4);
                    x = pack(acc[tid][4*j+2]*scale, acc[tid][4*j+3]*scale); memcpy(&sm[O_off + (i1*LDO + cc)*2], &x, 4); } }
            for (int wl = 0; wl < 4; wl++) for (int lane = 0; lane < 32; lane++)
                for (int i = lane; i < 16*(N1/8); i += 32) { const int rr = 16*wl + i/(N1/8), c8 = wg*N1 + (i % (N1/8))*8;
                    if (rr < cl) for (int e = 0; e < 8; e++) o[(c*64+rr)*V + v0 + c8 + e] = smf(O_off + (rr*LDO + c8 + e)*2); }
        }
        store_S();
    }
    // compare the block's columns
    double num = 0, den = 0, hn = 0, hd = 0; int nan = 0;
    for (int t = 0; t < T; t++) for (int j = v0; j < v0 + BV; j++) { double x = o[t*V+j]; if (x != x) nan++; num += (x-oref[t*V+j])*(x-oref[t*V+j]); den += oref[t*V+j]*oref[t*V+j]; }
    for (int tid = 0; tid < 256; tid++) { int warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3, wg = warp >> 2, wl = warp & 3;
        for (int mt = 0; mt < MT; mt++) for (int j = 0; j < N1/8; j++) { int r = 64*mt + 16*wl + gid, cc = wg*N1 + 8*j + 2*tig;
            double e[4] = {S[tid][mt][4*j] - Sr[r*V+v0+cc], S[tid][mt][4*j+1] - Sr[r*V+v0+cc+1], S[tid][mt][4*j+2] - Sr[(r+8)*V+v0+cc], S[tid][mt][4*j+3] - Sr[(r+8)*V+v0+cc+1]};
            for (int z = 0; z < 4; z++) hn += e[z]*e[z];
            hd += Sr[r*V+v0+cc]*Sr[r*V+v0+cc] + Sr[r*V+v0+cc+1]*Sr[r*V+v0+cc+1] + Sr[(r+8)*V+v0+cc]*Sr[(r+8)*V+v0+cc] + Sr[(r+8)*V+v0+cc+1]*Sr[(r+8)*V+v0+cc+1]; } }
    double rel = sqrt(num/den), hrel = sqrt(hn/hd);
    int ok = !nan && rel < 8e-3 && hrel < 8e-3;
    printf("%s K=%d BV=%d V=%d vblk=%d T=%d gate=%d: o rel %.2e (nan %d) ht rel %.2e\n", ok ? "ok  " : "FAIL", KD, BV, V, vblk, T, gmode, rel, nan, hrel);
    return ok;
}
int main() {
    int bad = 0;
    Cfg cfgs[] = {{64, 64}, {128, 64}, {128, 128}, {256, 64}};
    for (auto cf : cfgs) for (int gm = 0; gm < 3; gm++) { bad += !run(cf, 150, cf.BV, 0, gm, 1 + gm); }
    bad += !run({128, 64}, 200, 128, 1, 2, 7);
    bad += !run({64, 64}, 64, 256, 3, 2, 9);
    bad += !run({256, 64}, 65, 128, 1, 1, 11);
    printf("%d failed\n", bad);
    return bad != 0;
}
