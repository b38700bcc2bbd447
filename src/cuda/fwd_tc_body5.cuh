/* Version 5's kernel body (see fwd_tc_v5.cu for what it tries), written once
 * and instantiated by macros like fwd_tc_body.cuh (include after defining):
 *
 *   T5_NAME      kernel name
 *   T5_KD        K (64, 128, 256): the state's rows
 *   T5_BV        V columns owned by one block (grid.y = V / T5_BV)
 *   T5_RW,T5_CW  phase-2 warp grid over the K x T5_BV state (RW * CW == 8)
 *   T5_BF16      1: bf16 operands, 0: fp16
 *   T5_MINB      blocks per SM for __launch_bounds__ (2 caps registers at 128)
 *   T5_SDB       1: two S_s buffers (chunk c reads S_s[c & 1], writes S_s[(c+1) & 1]),
 *                so the end-of-chunk barrier goes; 0: one buffer and the barrier
 *
 * Always 8 warps, a 2-stage cp.async pipeline, C = 64.
 *
 * Phase 1, warp w: pair pr = w >> 1 owns row block r1 = gray(pr) = pr ^ (pr >> 1)
 * (rows 16 r1 .. 16 r1 + 15), column group cg = w & 1 (P1C = BV / 2 output columns).
 * Warps w and w + 4 share an SM sub-partition; the gray map gives them row blocks
 * {0, 3} or {1, 2}, so every sub-partition carries the same causal work.
 * The pair splits its row block's score tiles: warp cg computes the 16 x 8
 * half-tiles of keys 16 kb + 8 cg .. + 7 for kb = 0 .. r1 (no Q.K^T is computed
 * twice), in the same k-loop as Q.S (one Q fragment load serves both, and the
 * r1 + 1 score chains run beside the P1C / 8 Q.S chains); masks and weights them
 * in fp32 (exp2(b_i - b_j) only where j <= i, 0 elsewhere: never evaluated),
 * rounds them into A_s, meets its partner at a 64-thread named barrier and
 * reads the whole 16 x 16 (r1 + 1) strip back as A fragments for A.V.
 * r1 is warp-uniform; each value gets its own fully unrolled copy (switch).
 *
 * Phase 2 (state update) is v1's: S *= exp2(b_last); S += (K exp2(b_last - b))^T V.
 */

#ifndef T5_NW
#define T5_NW 8
#endif

/* Shared memory of one instance (must match the layout in the kernel): 2 stages of
 * Q, K [64][KD+8] and V [64][BV+8]; g [2][64] f32; S_s [1 or 2][KD][BV+8];
 * O_s [64][BV+8]; A_s [64][72]; b [NW][64] f32. */
#ifndef T5_SMEM
#define T5_SMEM(kd, bv, sdb, nw)                                                               \
    ((size_t)2 * (2 * 64 * ((kd) + 8) + 64 * ((bv) + 8)) * 2 + 2 * 64 * 4 +                    \
     (size_t)((sdb) ? 2 : 1) * (kd) * ((bv) + 8) * 2 + 64 * ((bv) + 8) * 2 + 64 * 72 * 2 + (nw) * 64 * 4)
#endif
#define T5_NT (32 * T5_NW)
#define T5_CG (T5_NW / 4)              /* column-group warps per row block */
#define T5_P1C (T5_BV / T5_CG)
#define T5_NHT(R) ((2 * (R) + 2 + T5_CG - 1) / T5_CG) /* half-tiles per warp, row block R */
#define T5_P2R (T5_KD / T5_RW)
#define T5_P2C (T5_BV / T5_CW)
#define T5_LDQ (T5_KD + 8)
#define T5_LDV (T5_BV + 8)
#define T5_LDA 72
#define T5_STAGE_ELEMS (2 * 64 * T5_LDQ + 64 * T5_LDV)
#define T5_NSB (T5_SDB ? 2 : 1)
#define T5_O_RS (32 / (T5_P1C / 8)) /* o rows between one lane's copies */
#define T5_QK_RS (T5_NT / (T5_KD / 8)) /* rows between one thread's Q/K copies */
#define T5_QK_IT (64 * (T5_KD / 8) / T5_NT)
#define T5_V_RS (T5_NT / (T5_BV / 8))
#define T5_V_IT (64 * (T5_BV / 8) / T5_NT)
#if T5_NT % (T5_KD / 8) || (64 * (T5_KD / 8)) % T5_NT || T5_NT % (T5_BV / 8) || (64 * (T5_BV / 8)) % T5_NT
#error "fwd_tc_body5.cuh: the cp.async slots must tile a chunk exactly"
#endif

#if T5_RW * T5_CW != T5_NW || (T5_NW != 8 && T5_NW != 16) || T5_P1C < 16
#error "fwd_tc_body5.cuh: T5_NW is 8 or 16, T5_RW * T5_CW == T5_NW, BV / (NW / 4) >= 16"
#endif

#if T5_BF16
#define T5_MMA sgla_mma_bf16
#define T5_PACK sgla_pack_bf16
#define T5_MUL2 sgla_mul2_bf16
#else
#define T5_MMA sgla_mma_f16
#define T5_PACK sgla_pack_f16
#define T5_MUL2 sgla_mul2_f16
#endif

__global__ void __launch_bounds__(T5_NT, T5_MINB) T5_NAME(const sgla_kparams p)
{
    extern __shared__ __align__(128) unsigned char tc_smem[];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
    const int64_t nh = blockIdx.x / p.nseg, seg = blockIdx.x - nh * p.nseg;
    const int64_t n = nh / p.H, h = nh - n * p.H;
    const int v0 = blockIdx.y * T5_BV;
    int64_t bidx, t0, t1;
    sgla_seq_range(&p, n, &bidx, &t0, &t1);
    if (p.nseg > 1) {
        if (p.mode == 1 && seg == p.nseg - 1) return; /* the last segment's local state is not needed */
        const int64_t a = t0 + seg * p.seg_len;
        t0 = a < t1 ? a : t1;
        t1 = t0 + p.seg_len < t1 ? t0 + p.seg_len : t1;
    }
    const int outputs = p.mode != 1;
    const int64_t len = t1 - t0;
    const int nchunks = (int)((len + 63) / 64); /* < 2^31: T * K * 2 bytes fit in device memory */
    const int64_t sq = p.H * T5_KD, sv = p.H * p.V; /* token strides */
    const int64_t row0 = (bidx * p.T + t0) * p.H + h;
    const uint16_t *qg = (const uint16_t *)p.q + row0 * T5_KD;
    const uint16_t *kg = (const uint16_t *)p.k + row0 * T5_KD;
    const uint16_t *vg = (const uint16_t *)p.v + row0 * p.V + v0;
    uint16_t *og = (uint16_t *)p.o + row0 * p.V + v0;
    const float *gg = p.gmode == SGLA_GATE_G ? p.g + row0 : (const float *)0;
    const float gl2 = p.gmode == SGLA_GATE_GAMMA ? p.g_gamma[h] * SGLA_LOG2E : 0.f;

    /* shared memory: must match T5_SMEM above */
    uint16_t *st_base = (uint16_t *)tc_smem;                          /* [2][STAGE_ELEMS] */
    float *g_s = (float *)(tc_smem + 2 * T5_STAGE_ELEMS * 2);         /* [2][64] */
    uint16_t *S_s = (uint16_t *)(g_s + 2 * 64);                       /* [NSB][KD][LDV] */
    uint16_t *O_s = S_s + T5_NSB * T5_KD * T5_LDV;                    /* [64][LDV] */
    uint16_t *A_s = O_s + 64 * T5_LDV;                                /* [64][LDA] */
    float *b_s = (float *)(A_s + 64 * T5_LDA);                        /* [NW][64] */
    float *bw = b_s + warp * 64;

    /* this thread's cp.async slots, the same in every chunk: Q/K rows ld_r + n * T5_QK_RS at
     * column ld_c, V rows lv_r + n * T5_V_RS at column lv_c (full chunks take this path; the
     * partial last chunk the general, zero-filling one) */
    const int ld_r = tid / (T5_KD / 8), ld_c = (tid % (T5_KD / 8)) * 8;
    const int lv_r = tid / (T5_BV / 8), lv_c = (tid % (T5_BV / 8)) * 8;
    const uint16_t *qg_t = qg + (int64_t)ld_r * sq + ld_c, *kg_t = kg + (int64_t)ld_r * sq + ld_c;
    const uint16_t *vg_t = vg + (int64_t)lv_r * sv + lv_c;
    const uint32_t ld_soff = (uint32_t)(ld_r * T5_LDQ + ld_c) * 2, lv_soff = (uint32_t)(lv_r * T5_LDV + lv_c) * 2;
#define T5_LOAD_CHUNK(cc, ss)                                                                  \
    do {                                                                                       \
        const int64_t tk0_ = (int64_t)(cc) * 64;                                               \
        const int cl_ = (int)(len - tk0_ < 64 ? len - tk0_ : 64);                              \
        uint16_t *qs_ = st_base + (ss) * T5_STAGE_ELEMS;                                       \
        uint16_t *ks_ = qs_ + 64 * T5_LDQ, *vs_ = ks_ + 64 * T5_LDQ;                           \
        if (cl_ == 64) {                                                                       \
            const uint32_t qd_ = sgla_smem_u32(qs_) + ld_soff, kd_ = qd_ + 64 * T5_LDQ * 2;    \
            const uint32_t vd_ = sgla_smem_u32(vs_) + lv_soff;                                 \
            const uint16_t *qp_ = qg_t + tk0_ * sq, *kp_ = kg_t + tk0_ * sq, *vp_ = vg_t + tk0_ * sv; \
            _Pragma("unroll") for (int n_ = 0; n_ < T5_QK_IT; n_++)                            \
            {                                                                                  \
                if (outputs) sgla_cp16(qd_ + n_ * T5_QK_RS * T5_LDQ * 2, qp_ + n_ * T5_QK_RS * sq, 16); \
                sgla_cp16(kd_ + n_ * T5_QK_RS * T5_LDQ * 2, kp_ + n_ * T5_QK_RS * sq, 16);      \
            }                                                                                  \
            _Pragma("unroll") for (int n_ = 0; n_ < T5_V_IT; n_++)                             \
                sgla_cp16(vd_ + n_ * T5_V_RS * T5_LDV * 2, vp_ + n_ * T5_V_RS * sv, 16);        \
        } else {                                                                               \
        _Pragma("unroll") for (int i_ = tid; i_ < 64 * (T5_KD / 8); i_ += T5_NT)               \
        {                                                                                      \
            const int r_ = i_ / (T5_KD / 8), c8_ = (i_ % (T5_KD / 8)) * 8;                     \
            const int ok_ = r_ < cl_;                                                          \
            const int64_t off_ = ok_ ? (tk0_ + r_) * sq + c8_ : 0;                             \
            if (outputs) sgla_cp16(sgla_smem_u32(qs_ + r_ * T5_LDQ + c8_), qg + off_, ok_ ? 16 : 0); \
            sgla_cp16(sgla_smem_u32(ks_ + r_ * T5_LDQ + c8_), kg + off_, ok_ ? 16 : 0);        \
        }                                                                                      \
        _Pragma("unroll") for (int i_ = tid; i_ < 64 * (T5_BV / 8); i_ += T5_NT)               \
        {                                                                                      \
            const int r_ = i_ / (T5_BV / 8), c8_ = (i_ % (T5_BV / 8)) * 8;                     \
            const int ok_ = r_ < cl_;                                                          \
            const int64_t off_ = ok_ ? (tk0_ + r_) * sv + c8_ : 0;                             \
            sgla_cp16(sgla_smem_u32(vs_ + r_ * T5_LDV + c8_), vg + off_, ok_ ? 16 : 0);        \
        }                                                                                      \
        }                                                                                      \
        if (gg && tid < 64) {                                                                  \
            const int ok_ = tid < cl_;                                                         \
            sgla_cp4(sgla_smem_u32(g_s + (ss) * 64 + tid), gg + (ok_ ? (tk0_ + tid) * p.H : 0), \
                     ok_ ? 4 : 0);                                                             \
        }                                                                                      \
    } while (0)

    /* ---- the state: h0 (or zero) into registers, rounded copy into smem ---- */
    const int rw = warp / T5_CW, cw = warp % T5_CW;
    const int kr0 = rw * T5_P2R, cc0 = cw * T5_P2C;
    float S[T5_P2R / 16][T5_P2C / 8][4];
    {
        const float *h0p = p.mode == 2 ? p.seg_buf + (seg * p.N * p.H + nh) * T5_KD * p.V + v0
                           : p.mode == 1 ? (const float *)0
                           : p.h0 ? p.h0 + nh * T5_KD * p.V + v0 : (const float *)0;
#pragma unroll
        for (int mi = 0; mi < T5_P2R / 16; mi++)
#pragma unroll
            for (int nj = 0; nj < T5_P2C / 8; nj++) {
                const int r = kr0 + 16 * mi + gid, c = cc0 + 8 * nj + 2 * tig;
                if (h0p) {
                    const float2 a = *(const float2 *)(h0p + (int64_t)r * p.V + c);
                    const float2 b = *(const float2 *)(h0p + (int64_t)(r + 8) * p.V + c);
                    S[mi][nj][0] = a.x;
                    S[mi][nj][1] = a.y;
                    S[mi][nj][2] = b.x;
                    S[mi][nj][3] = b.y;
                } else {
                    S[mi][nj][0] = S[mi][nj][1] = S[mi][nj][2] = S[mi][nj][3] = 0.f;
                }
            }
    }
    /* the state's 16-bit copy by stmatrix: per (mi, 16 columns) four 8 x 8 tiles, lane l
     * addressing row (l & 7) + 8 ((l >> 3) & 1), column 8 (l >> 4) */
    const uint32_t st_soff = (uint32_t)((kr0 + (lane & 7) + ((lane >> 3) & 1) * 8) * T5_LDV + cc0 + (lane >> 4) * 8) * 2;
#define T5_STORE_S(dst)                                                                        \
    do {                                                                                       \
        const uint32_t d_ = sgla_smem_u32(dst) + st_soff;                                      \
        _Pragma("unroll") for (int mi = 0; mi < T5_P2R / 16; mi++)                             \
            _Pragma("unroll") for (int j = 0; j < T5_P2C / 16; j++)                            \
                sgla_stm_x4(d_ + (mi * 16 * T5_LDV + j * 16) * 2,                              \
                            T5_PACK(S[mi][2 * j][0], S[mi][2 * j][1]),                         \
                            T5_PACK(S[mi][2 * j][2], S[mi][2 * j][3]),                         \
                            T5_PACK(S[mi][2 * j + 1][0], S[mi][2 * j + 1][1]),                 \
                            T5_PACK(S[mi][2 * j + 1][2], S[mi][2 * j + 1][3]));                \
    } while (0)
    T5_STORE_S(S_s); /* chunk 0 reads buffer 0; the loop's first barrier publishes it */

    /* ---- prologue: chunk 0 in flight ---- */
    if (nchunks > 0) T5_LOAD_CHUNK(0, 0);
    sgla_cp_commit();

    /* 8 warps: pair pr = w >> 1, gray map (warps w, w + 4 get row blocks {0,3} or {1,2});
     * 16 warps: r1 = w >> 2, so sub-partition w & 3 holds one warp of every row block */
    const int pr = warp / T5_CG, cg = warp % T5_CG;
    const int r1 = T5_NW == 8 ? pr ^ (pr >> 1) : pr;
    const int oc0 = cg * T5_P1C;
    const int qrow = 16 * r1;
    const int i0 = qrow + gid, i1 = i0 + 8;
    const float scl = p.scale;
    /* o rows of this lane: o_r + n * T5_O_RS (n < 16 / T5_O_RS), 8 columns at o_c */
    const int o_r = qrow + lane / (T5_P1C / 8), o_c = oc0 + (lane % (T5_P1C / 8)) * 8;
    uint16_t *og_t = og + (int64_t)o_r * sv + o_c;

    float ldsum = 0.f; /* total log2 decay of this block's tokens (mode 1) */
    for (int c = 0; c < nchunks; c++) {
        const int s = (int)(c & 1);
        SGLA_CP_WAIT(0);
        __syncthreads(); /* chunk c landed for all; everyone is past chunk c-1 (its stage, S_s, A_s, O_s) */
        {   /* prefetch chunk c + 1 into the stage chunk c - 1 used */
            if (c + 1 < nchunks) T5_LOAD_CHUNK(c + 1, s ^ 1);
            sgla_cp_commit();
        }
        const int cl = (int)(len - (int64_t)c * 64 < 64 ? len - (int64_t)c * 64 : 64);
        const uint16_t *qs = st_base + s * T5_STAGE_ELEMS;
        const uint16_t *ks = qs + 64 * T5_LDQ, *vs = ks + 64 * T5_LDQ;
        const uint16_t *Sr = S_s + (T5_SDB ? s * T5_KD * T5_LDV : 0); /* the state entering chunk c */

        /* chunk-local cumulative log2 gate (per warp copy) */
        if (p.gmode == SGLA_GATE_G) {
            float x0 = g_s[s * 64 + lane] * SGLA_LOG2E, x1 = g_s[s * 64 + lane + 32] * SGLA_LOG2E;
#pragma unroll
            for (int off = 1; off < 32; off <<= 1) {
                const float y0 = __shfl_up_sync(0xffffffffu, x0, off);
                const float y1 = __shfl_up_sync(0xffffffffu, x1, off);
                if (lane >= off) {
                    x0 += y0;
                    x1 += y1;
                }
            }
            x1 += __shfl_sync(0xffffffffu, x0, 31);
            bw[lane] = x0;
            bw[lane + 32] = x1;
        } else if (p.gmode == SGLA_GATE_GAMMA) {
            bw[lane] = gl2 * (float)(lane + 1 < cl ? lane + 1 : cl);
            bw[lane + 32] = gl2 * (float)(lane + 33 < cl ? lane + 33 : cl);
        }
        __syncwarp();

        if (outputs) {
        /* ---- phase 1: outputs of rows qrow..qrow+15, columns oc0..oc0+P1C-1 ---- */
        float acc[T5_P1C / 8][4];
#pragma unroll
        for (int j = 0; j < T5_P1C / 8; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
        const uint32_t qa_base = sgla_smem_u32(qs + (qrow + (lane & 15)) * T5_LDQ + (lane >> 4) * 8);
        const uint32_t sb_base =
            sgla_smem_u32(Sr + ((lane & 7) + ((lane >> 3) & 1) * 8) * T5_LDV + oc0 + (lane >> 4) * 8);
        /* warp cg owns the 8-key half-tiles h = cg, cg + CG, ... (keys 8h .. 8h + 7), rows
         * 8h + (lane & 7); lane >> 3 picks the 8-column slice: matrices 0..3 = b0, b1 of
         * k-step kk and b0, b1 of kk + 1 */
        const uint32_t kq_base = sgla_smem_u32(ks + (8 * cg + (lane & 7)) * T5_LDQ + (lane >> 3) * 8);
        const uint32_t aa_base = sgla_smem_u32(A_s + (qrow + (lane & 15)) * T5_LDA + (lane >> 4) * 8);
        const uint32_t vb_base =
            sgla_smem_u32(vs + ((lane & 7) + ((lane >> 3) & 1) * 8) * T5_LDV + oc0 + (lane >> 4) * 8);
        float bi0 = 0.f, bi1 = 0.f;
        if (p.gmode) {
            bi0 = bw[i0];
            bi1 = bw[i1];
        }

#define T5_PHASE1(R)                                                                           \
    do {                                                                                       \
        float sc[T5_NHT(R)][4];                                                                \
        uint32_t kf[T5_NHT(R)][4];                                                             \
        _Pragma("unroll") for (int kb = 0; kb < T5_NHT(R); kb++) sc[kb][0] = sc[kb][1] = sc[kb][2] = sc[kb][3] = 0.f; \
        _Pragma("unroll") for (int kk = 0; kk < T5_KD / 16; kk++)                              \
        {                                                                                      \
            uint32_t a[4];                                                                     \
            sgla_ldm_x4(a, qa_base + kk * 32);                                                 \
            if ((kk & 1) == 0) {                                                               \
                _Pragma("unroll") for (int kb = 0; kb < T5_NHT(R); kb++)                       \
                    if (cg + kb * T5_CG < 2 * (R) + 2)                                         \
                        sgla_ldm_x4(kf[kb], kq_base + (kb * 8 * T5_CG * T5_LDQ + kk * 16) * 2); \
            }                                                                                  \
            _Pragma("unroll") for (int kb = 0; kb < T5_NHT(R); kb++)                           \
                if (cg + kb * T5_CG < 2 * (R) + 2)                                             \
                    T5_MMA(sc[kb], a, kf[kb][2 * (kk & 1)], kf[kb][2 * (kk & 1) + 1]);         \
            _Pragma("unroll") for (int j = 0; j < T5_P1C / 16; j++)                            \
            {                                                                                  \
                uint32_t bb[4];                                                                \
                sgla_ldm_x4_t(bb, sb_base + (kk * 16 * T5_LDV + j * 16) * 2);                  \
                T5_MMA(acc[2 * j], a, bb[0], bb[1]);                                           \
                T5_MMA(acc[2 * j + 1], a, bb[2], bb[3]);                                       \
            }                                                                                  \
        }                                                                                      \
        /* mask and weight this warp's half-tiles in fp32, round into A_s */                  \
        _Pragma("unroll") for (int kb = 0; kb < T5_NHT(R); kb++)                               \
        if (cg + kb * T5_CG < 2 * (R) + 2) {                                                   \
            const int j0 = 8 * (cg + kb * T5_CG) + 2 * tig, j1 = j0 + 1;                       \
            float e0, e1, e2, e3;                                                              \
            if (p.gmode) {                                                                     \
                const float bj0 = bw[j0], bj1 = bw[j1];                                        \
                e0 = j0 <= i0 ? sc[kb][0] * (sgla_exp2(bi0 - bj0) * scl) : 0.f;                \
                e1 = j1 <= i0 ? sc[kb][1] * (sgla_exp2(bi0 - bj1) * scl) : 0.f;                \
                e2 = j0 <= i1 ? sc[kb][2] * (sgla_exp2(bi1 - bj0) * scl) : 0.f;                \
                e3 = j1 <= i1 ? sc[kb][3] * (sgla_exp2(bi1 - bj1) * scl) : 0.f;                \
            } else {                                                                           \
                e0 = j0 <= i0 ? sc[kb][0] * scl : 0.f;                                         \
                e1 = j1 <= i0 ? sc[kb][1] * scl : 0.f;                                         \
                e2 = j0 <= i1 ? sc[kb][2] * scl : 0.f;                                         \
                e3 = j1 <= i1 ? sc[kb][3] * scl : 0.f;                                         \
            }                                                                                  \
            *(uint32_t *)(A_s + i0 * T5_LDA + j0) = T5_PACK(e0, e1);                           \
            *(uint32_t *)(A_s + i1 * T5_LDA + j0) = T5_PACK(e2, e3);                           \
        }                                                                                      \
        {   /* Q.S part: decay from the chunk start and the scale (A carries it already) */    \
            const float w0 = p.gmode ? sgla_exp2(bi0) * scl : scl;                             \
            const float w1 = p.gmode ? sgla_exp2(bi1) * scl : scl;                             \
            _Pragma("unroll") for (int j = 0; j < T5_P1C / 8; j++)                             \
            {                                                                                  \
                acc[j][0] *= w0;                                                               \
                acc[j][1] *= w0;                                                               \
                acc[j][2] *= w1;                                                               \
                acc[j][3] *= w1;                                                               \
            }                                                                                  \
        }                                                                                      \
        sgla_bar_sync(1 + (R), 32 * T5_CG); /* the row block's other half-tiles are in A_s */ \
        _Pragma("unroll") for (int kb = 0; kb <= (R); kb++)                                    \
        {                                                                                      \
            uint32_t af[4];                                                                    \
            sgla_ldm_x4(af, aa_base + kb * 32);                                                \
            _Pragma("unroll") for (int j = 0; j < T5_P1C / 16; j++)                            \
            {                                                                                  \
                uint32_t bv[4];                                                                \
                sgla_ldm_x4_t(bv, vb_base + (kb * 16 * T5_LDV + j * 16) * 2);                  \
                T5_MMA(acc[2 * j], af, bv[0], bv[1]);                                          \
                T5_MMA(acc[2 * j + 1], af, bv[2], bv[3]);                                      \
            }                                                                                  \
        }                                                                                      \
    } while (0)

        switch (r1) {
        case 0: T5_PHASE1(0); break;
        case 1: T5_PHASE1(1); break;
        case 2: T5_PHASE1(2); break;
        default: T5_PHASE1(3); break;
        }
#undef T5_PHASE1

        /* o (scaled already), staged by stmatrix through this warp's own tile of O_s for
         * 16-byte stores: lane l copies row o_r + n * T5_O_RS, 8 columns at o_c */
        {
            const uint32_t od = sgla_smem_u32(O_s) +
                                (uint32_t)((qrow + (lane & 7) + ((lane >> 3) & 1) * 8) * T5_LDV + oc0 + (lane >> 4) * 8) * 2;
#pragma unroll
            for (int j = 0; j < T5_P1C / 16; j++)
                sgla_stm_x4(od + j * 32, T5_PACK(acc[2 * j][0], acc[2 * j][1]), T5_PACK(acc[2 * j][2], acc[2 * j][3]),
                            T5_PACK(acc[2 * j + 1][0], acc[2 * j + 1][1]),
                            T5_PACK(acc[2 * j + 1][2], acc[2 * j + 1][3]));
        }
        __syncwarp();
        {
            const uint16_t *os = O_s + o_r * T5_LDV + o_c;
            uint16_t *op = og_t + (int64_t)c * 64 * sv;
#pragma unroll
            for (int n = 0; n < 16 / T5_O_RS; n++)
                if (o_r + n * T5_O_RS < cl)
                    *(uint4 *)(op + n * T5_O_RS * sv) = *(const uint4 *)(os + n * T5_O_RS * T5_LDV);
        }
        }

        /* ---- phase 2: S = exp2(b_last) S + (K * exp2(b_last - b))^T V ---- */
        const float bC = p.gmode ? bw[63] : 0.f;
        ldsum += bC;
        if (p.gmode) {
            const float d = sgla_exp2(bC);
#pragma unroll
            for (int mi = 0; mi < T5_P2R / 16; mi++)
#pragma unroll
                for (int nj = 0; nj < T5_P2C / 8; nj++)
#pragma unroll
                    for (int e = 0; e < 4; e++) S[mi][nj][e] *= d;
        }
        const uint32_t ka_base =
            sgla_smem_u32(ks + ((lane & 7) + (lane >> 4) * 8) * T5_LDQ + kr0 + ((lane >> 3) & 1) * 8);
        const uint32_t v2_base =
            sgla_smem_u32(vs + ((lane & 7) + ((lane >> 3) & 1) * 8) * T5_LDV + cc0 + (lane >> 4) * 8);
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            uint32_t vf[T5_P2C / 16][4];
#pragma unroll
            for (int j = 0; j < T5_P2C / 16; j++) sgla_ldm_x4_t(vf[j], v2_base + (kk * 16 * T5_LDV + j * 16) * 2);
            /* weights of tokens 16 kk + 2 tig + {0, 1} and {8, 9}, rounded to 16 bits and applied
             * as packed pair products (one instruction per K register instead of unpack,
             * two fp32 products and a repack) */
            uint32_t w01 = 0, w89 = 0;
            if (p.gmode) {
                const int ta = 16 * kk + 2 * tig;
                w01 = T5_PACK(sgla_exp2(bC - bw[ta]), sgla_exp2(bC - bw[ta + 1]));
                w89 = T5_PACK(sgla_exp2(bC - bw[ta + 8]), sgla_exp2(bC - bw[ta + 9]));
            }
#pragma unroll
            for (int mi = 0; mi < T5_P2R / 16; mi++) {
                uint32_t ka[4];
                sgla_ldm_x4_t(ka, ka_base + (kk * 16 * T5_LDQ + mi * 16) * 2);
                if (p.gmode) {
                    ka[0] = T5_MUL2(ka[0], w01);
                    ka[1] = T5_MUL2(ka[1], w01);
                    ka[2] = T5_MUL2(ka[2], w89);
                    ka[3] = T5_MUL2(ka[3], w89);
                }
#pragma unroll
                for (int j = 0; j < T5_P2C / 16; j++) {
                    T5_MMA(S[mi][2 * j], ka, vf[j][0], vf[j][1]);
                    T5_MMA(S[mi][2 * j + 1], ka, vf[j][2], vf[j][3]);
                }
            }
        }
#if T5_SDB
        /* the other buffer: its last readers (chunk c-1) are all past this chunk's barrier */
        if (outputs) T5_STORE_S(S_s + (s ^ 1) * T5_KD * T5_LDV);
#else
        __syncthreads(); /* every warp is done reading S_s */
        if (outputs) T5_STORE_S(S_s);
#endif
    }
    SGLA_CP_WAIT(0);

    float *htp = p.mode == 1 ? p.seg_buf + (seg * p.N * p.H + nh) * T5_KD * p.V + v0
               : (p.nseg > 1 && seg != p.nseg - 1) ? (float *)0
               : p.ht ? p.ht + nh * T5_KD * p.V + v0 : (float *)0;
    if (p.mode == 1 && blockIdx.y == 0 && tid == 0) p.seg_ld[seg * p.N * p.H + nh] = ldsum;
    if (htp) {
#pragma unroll
        for (int mi = 0; mi < T5_P2R / 16; mi++)
#pragma unroll
            for (int nj = 0; nj < T5_P2C / 8; nj++) {
                const int r = kr0 + 16 * mi + gid, cc = cc0 + 8 * nj + 2 * tig;
                *(float2 *)(htp + (int64_t)r * p.V + cc) = make_float2(S[mi][nj][0], S[mi][nj][1]);
                *(float2 *)(htp + (int64_t)(r + 8) * p.V + cc) = make_float2(S[mi][nj][2], S[mi][nj][3]);
            }
    }
}

#undef T5_LOAD_CHUNK
#undef T5_STORE_S
#undef T5_MMA
#undef T5_PACK
#undef T5_MUL2
#undef T5_NW
#undef T5_NT
#undef T5_CG
#undef T5_NHT
#undef T5_P1C
#undef T5_P2R
#undef T5_P2C
#undef T5_LDQ
#undef T5_LDV
#undef T5_LDA
#undef T5_STAGE_ELEMS
#undef T5_NSB
#undef T5_O_RS
#undef T5_QK_RS
#undef T5_QK_IT
#undef T5_V_RS
#undef T5_V_IT
#undef T5_NAME
#undef T5_KD
#undef T5_BV
#undef T5_RW
#undef T5_CW
#undef T5_BF16
#undef T5_SDB
#undef T5_MINB
