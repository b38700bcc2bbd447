/* The tensor-core chunk kernel, written once and instantiated by macros
 * (C-style templates: include this file after defining)
 *
 *   TC_NAME      kernel name
 *   TC_KD        K (64, 128, 256): the state's rows
 *   TC_BV        V columns owned by one block (grid.y = V / TC_BV)
 *   TC_NW        warps (4 or 8)
 *   TC_RW,TC_CW  phase-2 warp grid over the K x TC_BV state (RW * CW == NW)
 *   TC_BF16      1: bf16 operands, 0: fp16
 *   TC_STAGES    cp.async pipeline depth (1, 2 or 3; 1 = load then compute)
 *   TC_QREG      (optional, default 0) 1: a warp loads its Q rows' fragments
 *                once per chunk into registers for both Q.S and Q.K^T
 *   TC_OQ        (optional, default 0) 1: stage o through the warp's own rows of
 *                the Q tile instead of a separate buffer (needs TC_QREG and
 *                NW == 4, so that no other warp reads those rows)
 *
 * One block per (sequence x head, V-block); the sequence is walked chunk by
 * chunk (C = 64) inside the block; the K x BV state lives in fp32 registers
 * (phase-2 layout) and, rounded to 16 bits, in shared memory for Q.S.
 *
 * Per chunk, b_i = cumulative log2 gate inside the chunk (restarting at every
 * chunk; padded rows get g = 0 so b_63 = b_last):
 *   phase 1, warp = (row block r of 16 rows, column group):
 *     acc  = Q_r S_prev                    (S read BEFORE the update: rule 1)
 *     acc *= exp2(b_i)                     (fp32, on the accumulator)
 *     for key blocks kb <= r:  A = Q_r K_kb^T, A_ij *= exp2(b_i - b_j) only
 *       where j <= i, 0 elsewhere (never evaluated: rule on the mask), rounded
 *       to 16 bits in registers, acc += A V_kb
 *     o = scale * acc
 *   phase 2, warp = (32 state rows, column slice):
 *     S *= exp2(b_last)                    (decay before adding: rule 2)
 *     S += (K * exp2(b_last - b_j))^T V    (K scaled in fp32, then rounded)
 *   then S is rounded into shared memory for the next chunk.
 */

#ifndef TC_QREG
#define TC_QREG 0
#endif
#ifndef TC_OQ
#define TC_OQ 0
#endif
#if TC_OQ && !(TC_QREG && TC_NW == 4)
#error "TC_OQ needs TC_QREG and 4 warps"
#endif
#define TC_NT (TC_NW * 32)
#define TC_CG (TC_NW / 4)
#define TC_P1C (TC_BV / TC_CG)
#define TC_P2R (TC_KD / TC_RW)
#define TC_P2C (TC_BV / TC_CW)
#define TC_LDQ (TC_KD + 8)
#define TC_LDV (TC_BV + 8)
#define TC_STAGE_ELEMS (2 * 64 * TC_LDQ + 64 * TC_LDV)

#if TC_BF16
#define TC_MMA sgla_mma_bf16
#define TC_PACK sgla_pack_bf16
#define TC_UNPACK sgla_unpack_bf16
#else
#define TC_MMA sgla_mma_f16
#define TC_PACK sgla_pack_f16
#define TC_UNPACK sgla_unpack_f16
#endif

__global__ void __launch_bounds__(TC_NT, 1) TC_NAME(const sgla_kparams p)
{
    extern __shared__ __align__(128) unsigned char tc_smem[];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
    const int64_t nh = blockIdx.x / p.nseg, seg = blockIdx.x - nh * p.nseg;
    const int64_t n = nh / p.H, h = nh - n * p.H;
    const int v0 = blockIdx.y * TC_BV;
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
    const int64_t nchunks = (len + 63) / 64;
    const int64_t sq = p.H * TC_KD, sv = p.H * p.V; /* token strides */
    const int64_t row0 = (bidx * p.T + t0) * p.H + h;
    const uint16_t *qg = (const uint16_t *)p.q + row0 * TC_KD;
    const uint16_t *kg = (const uint16_t *)p.k + row0 * TC_KD;
    const uint16_t *vg = (const uint16_t *)p.v + row0 * p.V + v0;
    uint16_t *og = (uint16_t *)p.o + row0 * p.V + v0;
    const float *gg = p.gmode == SGLA_GATE_G ? p.g + row0 : (const float *)0;
    const float gl2 = p.gmode == SGLA_GATE_GAMMA ? p.g_gamma[h] * SGLA_LOG2E : 0.f;

    uint16_t *st_base = (uint16_t *)tc_smem;
    float *g_s = (float *)(tc_smem + TC_STAGES * TC_STAGE_ELEMS * 2); /* [STAGES][64] */
    uint16_t *S_s = (uint16_t *)(g_s + TC_STAGES * 64);               /* [KD][LDV] */
#if TC_OQ
    float *b_s = (float *)(S_s + TC_KD * TC_LDV); /* [NW][64]; o staged in the Q tile */
#else
    uint16_t *O_s = S_s + TC_KD * TC_LDV;         /* [64][LDV] */
    float *b_s = (float *)(O_s + 64 * TC_LDV);    /* [NW][64] */
#endif
    float *bw = b_s + warp * 64;

#define TC_LOAD_CHUNK(cc, ss)                                                                  \
    do {                                                                                       \
        const int64_t tk0_ = (int64_t)(cc) * 64;                                               \
        const int cl_ = (int)(len - tk0_ < 64 ? len - tk0_ : 64);                              \
        uint16_t *qs_ = st_base + (ss) * TC_STAGE_ELEMS;                                       \
        uint16_t *ks_ = qs_ + 64 * TC_LDQ, *vs_ = ks_ + 64 * TC_LDQ;                           \
        _Pragma("unroll") for (int i_ = tid; i_ < 64 * (TC_KD / 8); i_ += TC_NT)               \
        {                                                                                      \
            const int r_ = i_ / (TC_KD / 8), c8_ = (i_ % (TC_KD / 8)) * 8;                     \
            const int ok_ = r_ < cl_;                                                          \
            const int64_t off_ = ok_ ? (tk0_ + r_) * sq + c8_ : 0;                             \
            if (outputs) sgla_cp16(sgla_smem_u32(qs_ + r_ * TC_LDQ + c8_), qg + off_, ok_ ? 16 : 0); \
            sgla_cp16(sgla_smem_u32(ks_ + r_ * TC_LDQ + c8_), kg + off_, ok_ ? 16 : 0);        \
        }                                                                                      \
        _Pragma("unroll") for (int i_ = tid; i_ < 64 * (TC_BV / 8); i_ += TC_NT)               \
        {                                                                                      \
            const int r_ = i_ / (TC_BV / 8), c8_ = (i_ % (TC_BV / 8)) * 8;                     \
            const int ok_ = r_ < cl_;                                                          \
            const int64_t off_ = ok_ ? (tk0_ + r_) * sv + c8_ : 0;                             \
            sgla_cp16(sgla_smem_u32(vs_ + r_ * TC_LDV + c8_), vg + off_, ok_ ? 16 : 0);        \
        }                                                                                      \
        if (gg && tid < 64) {                                                                  \
            const int ok_ = tid < cl_;                                                         \
            sgla_cp4(sgla_smem_u32(g_s + (ss) * 64 + tid), gg + (ok_ ? (tk0_ + tid) * p.H : 0), \
                     ok_ ? 4 : 0);                                                             \
        }                                                                                      \
    } while (0)

    /* ---- the state: h0 (or zero) into registers, rounded copy into smem ---- */
    const int rw = warp / TC_CW, cw = warp % TC_CW;
    const int kr0 = rw * TC_P2R, cc0 = cw * TC_P2C;
    float S[TC_P2R / 16][TC_P2C / 8][4];
    {
        const float *h0p = p.mode == 2 ? p.seg_buf + (seg * p.N * p.H + nh) * TC_KD * p.V + v0
                           : p.mode == 1 ? (const float *)0
                           : p.h0 ? p.h0 + nh * TC_KD * p.V + v0 : (const float *)0;
#pragma unroll
        for (int mi = 0; mi < TC_P2R / 16; mi++)
#pragma unroll
            for (int nj = 0; nj < TC_P2C / 8; nj++) {
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
#define TC_STORE_S()                                                                           \
    do {                                                                                       \
        _Pragma("unroll") for (int mi = 0; mi < TC_P2R / 16; mi++)                             \
            _Pragma("unroll") for (int nj = 0; nj < TC_P2C / 8; nj++)                          \
        {                                                                                      \
            const int r = kr0 + 16 * mi + gid, c = cc0 + 8 * nj + 2 * tig;                     \
            *(uint32_t *)(S_s + r * TC_LDV + c) = TC_PACK(S[mi][nj][0], S[mi][nj][1]);         \
            *(uint32_t *)(S_s + (r + 8) * TC_LDV + c) = TC_PACK(S[mi][nj][2], S[mi][nj][3]);   \
        }                                                                                      \
    } while (0)
    TC_STORE_S();

    /* ---- prologue: chunks 0 .. STAGES-2 in flight ---- */
#pragma unroll
    for (int s = 0; s < TC_STAGES - 1; s++) {
        if (s < nchunks) TC_LOAD_CHUNK(s, s);
        sgla_cp_commit();
    }

    const int r1 = warp / TC_CG, oc0 = (warp % TC_CG) * TC_P1C;
    const int qrow = 16 * r1;
    const int i0 = qrow + gid, i1 = i0 + 8;

    float ldsum = 0.f; /* total log2 decay of this block's tokens (mode 1) */
    for (int64_t c = 0; c < nchunks; c++) {
        const int s = (int)(c % TC_STAGES);
#if TC_STAGES == 1
        /* no prefetch: the block's own loads wait; a second block on the SM overlaps them */
        TC_LOAD_CHUNK(c, 0);
        sgla_cp_commit();
        SGLA_CP_WAIT(0);
        __syncthreads();
#else
        SGLA_CP_WAIT(TC_STAGES - 2);
        __syncthreads();
        {   /* prefetch chunk c + STAGES - 1 into the stage chunk c - 1 used */
            const int64_t nc = c + TC_STAGES - 1;
            if (nc < nchunks) TC_LOAD_CHUNK(nc, (int)(nc % TC_STAGES));
            sgla_cp_commit();
        }
#endif
        const int cl = (int)(len - c * 64 < 64 ? len - c * 64 : 64);
        const uint16_t *qs = st_base + s * TC_STAGE_ELEMS;
        const uint16_t *ks = qs + 64 * TC_LDQ, *vs = ks + 64 * TC_LDQ;

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
        /* ---- phase 1: outputs of rows qrow..qrow+15, columns oc0.. ---- */
        float acc[TC_P1C / 8][4];
#pragma unroll
        for (int j = 0; j < TC_P1C / 8; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
        const uint32_t qa_base = sgla_smem_u32(qs + (qrow + (lane & 15)) * TC_LDQ + (lane >> 4) * 8);
        const uint32_t sb_base =
            sgla_smem_u32(S_s + ((lane & 7) + ((lane >> 3) & 1) * 8) * TC_LDV + oc0 + (lane >> 4) * 8);
#if TC_QREG
        uint32_t qf[TC_KD / 16][4];
#pragma unroll
        for (int kk = 0; kk < TC_KD / 16; kk++) sgla_ldm_x4(qf[kk], qa_base + kk * 32);
#define TC_QFRAG(kk, a) const uint32_t *a = qf[kk]
#else
#define TC_QFRAG(kk, a) \
    uint32_t a[4];      \
    sgla_ldm_x4(a, qa_base + (kk) * 32)
#endif
#pragma unroll
        for (int kk = 0; kk < TC_KD / 16; kk++) {
            TC_QFRAG(kk, a);
#pragma unroll
            for (int j = 0; j < TC_P1C / 16; j++) {
                uint32_t bb[4];
                sgla_ldm_x4_t(bb, sb_base + (kk * 16 * TC_LDV + j * 16) * 2);
                TC_MMA(acc[2 * j], a, bb[0], bb[1]);
                TC_MMA(acc[2 * j + 1], a, bb[2], bb[3]);
            }
        }
        float bi0 = 0.f, bi1 = 0.f;
        if (p.gmode) {
            bi0 = bw[i0];
            bi1 = bw[i1];
            const float w0 = sgla_exp2(bi0), w1 = sgla_exp2(bi1);
#pragma unroll
            for (int j = 0; j < TC_P1C / 8; j++) {
                acc[j][0] *= w0;
                acc[j][1] *= w0;
                acc[j][2] *= w1;
                acc[j][3] *= w1;
            }
        }
        const uint32_t kb_base =
            sgla_smem_u32(ks + ((lane & 7) + ((lane >> 4) << 3)) * TC_LDQ + ((lane >> 3) & 1) * 8);
        const uint32_t vb_base =
            sgla_smem_u32(vs + ((lane & 7) + ((lane >> 3) & 1) * 8) * TC_LDV + oc0 + (lane >> 4) * 8);
#pragma unroll
        for (int kb = 0; kb < 4; kb++) {
            if (kb > r1) break;
            float sc[2][4];
#pragma unroll
            for (int e = 0; e < 4; e++) sc[0][e] = sc[1][e] = 0.f;
#pragma unroll
            for (int kk = 0; kk < TC_KD / 16; kk++) {
                TC_QFRAG(kk, a);
                uint32_t bk[4];
                sgla_ldm_x4(bk, kb_base + (kb * 16 * TC_LDQ + kk * 16) * 2);
                TC_MMA(sc[0], a, bk[0], bk[1]);
                TC_MMA(sc[1], a, bk[2], bk[3]);
            }
#pragma unroll
            for (int nt = 0; nt < 2; nt++) {
                const int j0 = 16 * kb + 8 * nt + 2 * tig, j1 = j0 + 1;
                if (p.gmode) {
                    const float bj0 = bw[j0], bj1 = bw[j1];
                    sc[nt][0] = j0 <= i0 ? sc[nt][0] * sgla_exp2(bi0 - bj0) : 0.f;
                    sc[nt][1] = j1 <= i0 ? sc[nt][1] * sgla_exp2(bi0 - bj1) : 0.f;
                    sc[nt][2] = j0 <= i1 ? sc[nt][2] * sgla_exp2(bi1 - bj0) : 0.f;
                    sc[nt][3] = j1 <= i1 ? sc[nt][3] * sgla_exp2(bi1 - bj1) : 0.f;
                } else {
                    sc[nt][0] = j0 <= i0 ? sc[nt][0] : 0.f;
                    sc[nt][1] = j1 <= i0 ? sc[nt][1] : 0.f;
                    sc[nt][2] = j0 <= i1 ? sc[nt][2] : 0.f;
                    sc[nt][3] = j1 <= i1 ? sc[nt][3] : 0.f;
                }
            }
            uint32_t af[4];
            af[0] = TC_PACK(sc[0][0], sc[0][1]);
            af[1] = TC_PACK(sc[0][2], sc[0][3]);
            af[2] = TC_PACK(sc[1][0], sc[1][1]);
            af[3] = TC_PACK(sc[1][2], sc[1][3]);
#pragma unroll
            for (int j = 0; j < TC_P1C / 16; j++) {
                uint32_t bv[4];
                sgla_ldm_x4_t(bv, vb_base + (kb * 16 * TC_LDV + j * 16) * 2);
                TC_MMA(acc[2 * j], af, bv[0], bv[1]);
                TC_MMA(acc[2 * j + 1], af, bv[2], bv[3]);
            }
        }
        /* o = scale * acc, staged through this warp's own smem tile for 16-byte stores */
#if TC_OQ
        uint16_t *O_s = (uint16_t *)qs - oc0; /* rows qrow.. of the Q tile, stride LDQ */
        __syncwarp();                          /* every lane's ldmatrix of these rows is done */
#define TC_LDO TC_LDQ
#else
#define TC_LDO TC_LDV
#endif
#pragma unroll
        for (int j = 0; j < TC_P1C / 8; j++) {
            const int cc = oc0 + 8 * j + 2 * tig;
            *(uint32_t *)(O_s + i0 * TC_LDO + cc) = TC_PACK(acc[j][0] * p.scale, acc[j][1] * p.scale);
            *(uint32_t *)(O_s + i1 * TC_LDO + cc) = TC_PACK(acc[j][2] * p.scale, acc[j][3] * p.scale);
        }
        __syncwarp();
#pragma unroll
        for (int i = lane; i < 16 * (TC_P1C / 8); i += 32) {
            const int rr = qrow + i / (TC_P1C / 8), c8 = oc0 + (i % (TC_P1C / 8)) * 8;
            if (rr < cl)
                *(uint4 *)(og + (c * 64 + rr) * sv + c8) = *(const uint4 *)(O_s + rr * TC_LDO + c8);
        }

        }
        /* ---- phase 2: S = exp2(b_last) S + (K * exp2(b_last - b))^T V ---- */
        const float bC = p.gmode ? bw[63] : 0.f;
        ldsum += bC;
        if (p.gmode) {
            const float d = sgla_exp2(bC);
#pragma unroll
            for (int mi = 0; mi < TC_P2R / 16; mi++)
#pragma unroll
                for (int nj = 0; nj < TC_P2C / 8; nj++)
#pragma unroll
                    for (int e = 0; e < 4; e++) S[mi][nj][e] *= d;
        }
        const uint32_t ka_base =
            sgla_smem_u32(ks + ((lane & 7) + (lane >> 4) * 8) * TC_LDQ + kr0 + ((lane >> 3) & 1) * 8);
        const uint32_t v2_base =
            sgla_smem_u32(vs + ((lane & 7) + ((lane >> 3) & 1) * 8) * TC_LDV + cc0 + (lane >> 4) * 8);
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            uint32_t vf[TC_P2C / 16][4];
#pragma unroll
            for (int j = 0; j < TC_P2C / 16; j++) sgla_ldm_x4_t(vf[j], v2_base + (kk * 16 * TC_LDV + j * 16) * 2);
            float w0 = 1.f, w1 = 1.f, w2 = 1.f, w3 = 1.f;
            if (p.gmode) {
                const int ta = 16 * kk + 2 * tig;
                w0 = sgla_exp2(bC - bw[ta]);
                w1 = sgla_exp2(bC - bw[ta + 1]);
                w2 = sgla_exp2(bC - bw[ta + 8]);
                w3 = sgla_exp2(bC - bw[ta + 9]);
            }
#pragma unroll
            for (int mi = 0; mi < TC_P2R / 16; mi++) {
                uint32_t ka[4];
                sgla_ldm_x4_t(ka, ka_base + (kk * 16 * TC_LDQ + mi * 16) * 2);
                if (p.gmode) {
                    float2 f;
                    f = TC_UNPACK(ka[0]); ka[0] = TC_PACK(f.x * w0, f.y * w1);
                    f = TC_UNPACK(ka[1]); ka[1] = TC_PACK(f.x * w0, f.y * w1);
                    f = TC_UNPACK(ka[2]); ka[2] = TC_PACK(f.x * w2, f.y * w3);
                    f = TC_UNPACK(ka[3]); ka[3] = TC_PACK(f.x * w2, f.y * w3);
                }
#pragma unroll
                for (int j = 0; j < TC_P2C / 16; j++) {
                    TC_MMA(S[mi][2 * j], ka, vf[j][0], vf[j][1]);
                    TC_MMA(S[mi][2 * j + 1], ka, vf[j][2], vf[j][3]);
                }
            }
        }
        __syncthreads(); /* every warp is done reading S_s (and this stage) */
        if (outputs) TC_STORE_S();
    }
    SGLA_CP_WAIT(0);

    float *htp = p.mode == 1 ? p.seg_buf + (seg * p.N * p.H + nh) * TC_KD * p.V + v0
               : (p.nseg > 1 && seg != p.nseg - 1) ? (float *)0
               : p.ht ? p.ht + nh * TC_KD * p.V + v0 : (float *)0;
    if (p.mode == 1 && blockIdx.y == 0 && tid == 0) p.seg_ld[seg * p.N * p.H + nh] = ldsum;
    if (htp) {
#pragma unroll
        for (int mi = 0; mi < TC_P2R / 16; mi++)
#pragma unroll
            for (int nj = 0; nj < TC_P2C / 8; nj++) {
                const int r = kr0 + 16 * mi + gid, cc = cc0 + 8 * nj + 2 * tig;
                *(float2 *)(htp + (int64_t)r * p.V + cc) = make_float2(S[mi][nj][0], S[mi][nj][1]);
                *(float2 *)(htp + (int64_t)(r + 8) * p.V + cc) = make_float2(S[mi][nj][2], S[mi][nj][3]);
            }
    }
}

#undef TC_QFRAG
#undef TC_LDO
#undef TC_QREG
#undef TC_OQ
#undef TC_LOAD_CHUNK
#undef TC_STORE_S
#undef TC_MMA
#undef TC_PACK
#undef TC_UNPACK
#undef TC_NT
#undef TC_CG
#undef TC_P1C
#undef TC_P2R
#undef TC_P2C
#undef TC_LDQ
#undef TC_LDV
#undef TC_STAGE_ELEMS
#undef TC_NAME
#undef TC_KD
#undef TC_BV
#undef TC_NW
#undef TC_RW
#undef TC_CW
#undef TC_BF16
#undef TC_STAGES
