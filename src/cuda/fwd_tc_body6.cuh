/* Version 6's kernel body (see fwd_tc_v6.cu for what it tries), instantiated by
 * macros (include after defining):
 *
 *   T6_NAME   kernel name
 *   T6_KD     K (64, 128, 256)
 *   T6_BV     V columns owned by one block (64 or 128); grid.y = V / T6_BV
 *   T6_BF16   1: bf16 operands, 0: fp16
 *   T6_MINB   blocks per SM for __launch_bounds__
 *
 * 8 warps = two warpgroups (WG g = warp / 4, warp wl = warp % 4 inside it).
 * WG g owns the block's V columns [g N1, (g+1) N1), N1 = BV / 2, for everything:
 *   phase 1 (outputs of the chunk's 64 rows, those columns):
 *     acc  = Q S_prev[:, cols]        wgmma, A = Q (smem, K-major), B = S_s (smem, N-major)
 *     sc   = Q K^T                    wgmma, A = Q, B = K (smem, K-major); the same in both WGs
 *     acc *= exp2(b_i); sc_ij *= exp2(b_i - b_j) where j <= i, 0 elsewhere (never evaluated)
 *     acc += sc V[:, cols]            wgmma, A = sc rounded to 16 bits in registers, B = V (N-major)
 *   phase 2 (the state's columns of this WG, all K rows: K / 64 m-tiles):
 *     S *= exp2(b_last); S += (K exp2(b_last - b))^T V[:, cols]
 *                                     wgmma, A = K^T via ldmatrix.trans, scaled in fp32 and
 *                                     rounded in registers, B = V (N-major)
 *   then S (rounded) into S_s[:, cols], which only this WG reads: one block barrier per
 *   chunk (the top one: cp.async data landed, S_s written, the other stage free).
 *
 * Shared-memory tiles use wgmma's no-swizzle canonical layouts, in 128-byte core
 * matrices of 8 rows x 16 bytes:
 *   K-major tile (Q, K: 64 tokens x KD, the reduction dim contiguous):
 *     element (r, c) at ((r/8)(KD/8) + c/8) 128 + (r%8) 16 + (c%8) 2 bytes;
 *     as a descriptor: LBO (next 8 of the reduction dim) = 128, SBO (next 8 rows) = KD*16.
 *   N-major tile (V: 64 tokens x BV; S_s: KD x BV; the N dim contiguous):
 *     element (k, n) at ((k/8)(BV/8) + n/8) 128 + (k%8) 16 + (n%8) 2 bytes;
 *     as a descriptor (canonical ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)), T = 8):
 *     SBO (next 8 of N) = 128, LBO (next 8 of the reduction dim) = BV*16.
 * A thread's i-th 16-byte cp.async chunk of a tile is byte i*16 of it: 8 consecutive
 * threads fill one core matrix (no bank conflict).
 */

#define T6_NT 256
#define T6_N1 (T6_BV / 2)
#define T6_MT (T6_KD / 64)
#define T6_QBYTES (64 * T6_KD * 2)
#define T6_VBYTES (64 * T6_BV * 2)
#define T6_STAGE_BYTES (2 * T6_QBYTES + T6_VBYTES)
#define T6_LDO (T6_BV + 8)

#if T6_BF16
#define T6_PACK sgla_pack_bf16
#define T6_UNPACK sgla_unpack_bf16
#if T6_N1 == 64
#define T6_SS_T1 sgla_wg_ss_n64_t1_bf16
#define T6_RS_T1 sgla_wg_rs_n64_t1_bf16
#else
#define T6_SS_T1 sgla_wg_ss_n32_t1_bf16
#define T6_RS_T1 sgla_wg_rs_n32_t1_bf16
#endif
#define T6_SS_QK sgla_wg_ss_n64_t0_bf16
#else
#define T6_PACK sgla_pack_f16
#define T6_UNPACK sgla_unpack_f16
#if T6_N1 == 64
#define T6_SS_T1 sgla_wg_ss_n64_t1_f16
#define T6_RS_T1 sgla_wg_rs_n64_t1_f16
#else
#define T6_SS_T1 sgla_wg_ss_n32_t1_f16
#define T6_RS_T1 sgla_wg_rs_n32_t1_f16
#endif
#define T6_SS_QK sgla_wg_ss_n64_t0_f16
#endif

__global__ void __launch_bounds__(T6_NT, T6_MINB) T6_NAME(const sgla_kparams p)
{
    extern __shared__ __align__(1024) unsigned char tc_smem[];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
    const int wg = warp >> 2, wl = warp & 3;
    const int64_t nh = blockIdx.x / p.nseg, seg = blockIdx.x - nh * p.nseg;
    const int64_t n = nh / p.H, h = nh - n * p.H;
    const int v0 = blockIdx.y * T6_BV;
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
    const int64_t sq = p.H * T6_KD, sv = p.H * p.V; /* token strides */
    const int64_t row0 = (bidx * p.T + t0) * p.H + h;
    const uint16_t *qg = (const uint16_t *)p.q + row0 * T6_KD;
    const uint16_t *kg = (const uint16_t *)p.k + row0 * T6_KD;
    const uint16_t *vg = (const uint16_t *)p.v + row0 * p.V + v0;
    uint16_t *og = (uint16_t *)p.o + row0 * p.V + v0;
    const float *gg = p.gmode == SGLA_GATE_G ? p.g + row0 : (const float *)0;
    const float gl2 = p.gmode == SGLA_GATE_GAMMA ? p.g_gamma[h] * SGLA_LOG2E : 0.f;

    /* shared memory: must match T6_SMEM in fwd_tc_v6.cu */
    unsigned char *st_base = tc_smem;                                          /* [2][Q | K | V] */
    uint16_t *S_s = (uint16_t *)(tc_smem + 2 * T6_STAGE_BYTES);                 /* KD x BV, N-major */
    uint16_t *O_s = S_s + T6_KD * T6_BV;                                        /* [64][LDO] */
    float *g_s = (float *)(O_s + 64 * T6_LDO);                                  /* [2][64] */
    float *b_s = g_s + 2 * 64;                                                  /* [8][64] */
    float *bw = b_s + warp * 64;
    const uint32_t st_u32 = sgla_smem_u32(st_base), S_u32 = sgla_smem_u32(S_s);

#define T6_LOAD_CHUNK(cc, ss)                                                                  \
    do {                                                                                       \
        const int64_t tk0_ = (int64_t)(cc) * 64;                                               \
        const int cl_ = (int)(len - tk0_ < 64 ? len - tk0_ : 64);                              \
        const uint32_t qs_ = st_u32 + (ss) * T6_STAGE_BYTES, ks_ = qs_ + T6_QBYTES, vs_ = ks_ + T6_QBYTES; \
        _Pragma("unroll") for (int i_ = tid; i_ < 64 * T6_KD / 8; i_ += T6_NT)                 \
        {                                                                                      \
            const int r_ = (i_ / T6_KD) * 8 + (i_ & 7), c8_ = ((i_ >> 3) % (T6_KD / 8)) * 8;    \
            const int ok_ = r_ < cl_;                                                          \
            const int64_t off_ = ok_ ? (tk0_ + r_) * sq + c8_ : 0;                             \
            if (outputs) sgla_cp16(qs_ + i_ * 16, qg + off_, ok_ ? 16 : 0);                    \
            sgla_cp16(ks_ + i_ * 16, kg + off_, ok_ ? 16 : 0);                                 \
        }                                                                                      \
        _Pragma("unroll") for (int i_ = tid; i_ < 64 * T6_BV / 8; i_ += T6_NT)                 \
        {                                                                                      \
            const int r_ = (i_ / T6_BV) * 8 + (i_ & 7), c8_ = ((i_ >> 3) % (T6_BV / 8)) * 8;    \
            const int ok_ = r_ < cl_;                                                          \
            const int64_t off_ = ok_ ? (tk0_ + r_) * sv + c8_ : 0;                             \
            sgla_cp16(vs_ + i_ * 16, vg + off_, ok_ ? 16 : 0);                                 \
        }                                                                                      \
        if (gg && tid < 64) {                                                                  \
            const int ok_ = tid < cl_;                                                         \
            sgla_cp4(sgla_smem_u32(g_s + (ss) * 64 + tid), gg + (ok_ ? (tk0_ + tid) * p.H : 0), \
                     ok_ ? 4 : 0);                                                             \
        }                                                                                      \
    } while (0)

    /* ---- the state: columns [wg N1, (wg+1) N1) of the block, all KD rows; m-tile mt holds
     * rows 64 mt + 16 wl + gid (+8), columns wg N1 + 8 j + 2 tig (+1) in S[mt][4j ..] ---- */
    float S[T6_MT][T6_N1 / 2];
    {
        const float *h0p = p.mode == 2 ? p.seg_buf + (seg * p.N * p.H + nh) * T6_KD * p.V + v0
                           : p.mode == 1 ? (const float *)0
                           : p.h0 ? p.h0 + nh * T6_KD * p.V + v0 : (const float *)0;
#pragma unroll
        for (int mt = 0; mt < T6_MT; mt++)
#pragma unroll
            for (int j = 0; j < T6_N1 / 8; j++) {
                const int r = 64 * mt + 16 * wl + gid, c = wg * T6_N1 + 8 * j + 2 * tig;
                if (h0p) {
                    const float2 a = *(const float2 *)(h0p + (int64_t)r * p.V + c);
                    const float2 b = *(const float2 *)(h0p + (int64_t)(r + 8) * p.V + c);
                    S[mt][4 * j + 0] = a.x;
                    S[mt][4 * j + 1] = a.y;
                    S[mt][4 * j + 2] = b.x;
                    S[mt][4 * j + 3] = b.y;
                } else {
                    S[mt][4 * j + 0] = S[mt][4 * j + 1] = S[mt][4 * j + 2] = S[mt][4 * j + 3] = 0.f;
                }
            }
    }
    /* rounded copy into S_s (N-major: element (k, n) at ((k/8)(BV/8) + n/8) 128 + (k%8) 16 + (n%8) 2) */
#define T6_STORE_S()                                                                           \
    do {                                                                                       \
        _Pragma("unroll") for (int mt = 0; mt < T6_MT; mt++)                                   \
            _Pragma("unroll") for (int j = 0; j < T6_N1 / 8; j++)                              \
        {                                                                                      \
            const int r = 64 * mt + 16 * wl + gid, nb = (wg * T6_N1) / 8 + j;                 \
            unsigned char *p0_ = (unsigned char *)S_s + ((r >> 3) * (T6_BV / 8) + nb) * 128 + (r & 7) * 16 + tig * 4; \
            *(uint32_t *)p0_ = T6_PACK(S[mt][4 * j + 0], S[mt][4 * j + 1]);                    \
            *(uint32_t *)(p0_ + (T6_BV / 8) * 128) = T6_PACK(S[mt][4 * j + 2], S[mt][4 * j + 3]); \
        }                                                                                      \
        sgla_fence_proxy_async(); /* these st.shared are read next by wgmma */                 \
    } while (0)
    if (outputs) T6_STORE_S();

    /* ---- prologue: chunk 0 in flight ---- */
    if (nchunks > 0) T6_LOAD_CHUNK(0, 0);
    sgla_cp_commit();

    const int i0 = 16 * wl + gid, i1 = i0 + 8; /* this thread's rows in phase 1 */
    /* descriptor constants (bytes): K-major Q/K: LBO 128, SBO KD*16; N-major V/S_s: LBO BV*16, SBO 128 */
    const uint64_t dS = sgla_wg_desc(S_u32 + wg * T6_N1 * 16, T6_BV * 16, 128);

    float ldsum = 0.f; /* total log2 decay of this block's tokens (mode 1) */
    for (int c = 0; c < nchunks; c++) {
        const int s = c & 1;
        SGLA_CP_WAIT(0);
        sgla_fence_proxy_async(); /* this thread's cp.async data is read next by wgmma */
        __syncthreads();          /* chunk c landed; S_s written; everyone is past chunk c-1 */
        {   /* prefetch chunk c + 1 into the stage chunk c - 1 used (its wgmma reads completed) */
            if (c + 1 < nchunks) T6_LOAD_CHUNK(c + 1, s ^ 1);
            sgla_cp_commit();
        }
        const int cl = (int)(len - (int64_t)c * 64 < 64 ? len - (int64_t)c * 64 : 64);
        const uint32_t qs = st_u32 + s * T6_STAGE_BYTES, ks = qs + T6_QBYTES, vs = ks + T6_QBYTES;
        const uint64_t dQ = sgla_wg_desc(qs, 128, T6_KD * 16);
        const uint64_t dK = sgla_wg_desc(ks, 128, T6_KD * 16);
        const uint64_t dV = sgla_wg_desc(vs + wg * T6_N1 * 16, T6_BV * 16, 128);

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
        const float bC = p.gmode ? bw[63] : 0.f;
        ldsum += bC;

        float acc[T6_N1 / 2];
        uint32_t af[4][4]; /* A.V's A operand: kept in place until that wgmma completes */
        if (outputs) {
            /* ---- phase 1a: sc = Q K^T, then acc = Q S_prev[:, cols] (two wgmma groups) ---- */
            float sc[32];
#pragma unroll
            for (int e = 0; e < T6_N1 / 2; e++) acc[e] = 0.f;
#pragma unroll
            for (int e = 0; e < 32; e++) sc[e] = 0.f;
            sgla_wg_fence();
#pragma unroll
            for (int kk = 0; kk < T6_KD / 16; kk++)
                T6_SS_QK(sc, dQ + (uint64_t)(kk * 16), dK + (uint64_t)(kk * 16)); /* +kk*256 B */
            sgla_wg_commit();
#pragma unroll
            for (int kk = 0; kk < T6_KD / 16; kk++)
                T6_SS_T1(acc, dQ + (uint64_t)(kk * 16), dS + (uint64_t)(kk * 2 * T6_BV)); /* +2kk*BV*16 B */
            sgla_wg_commit();
            SGLA_WG_WAIT(1); /* Q.K^T done; Q.S may still run while the scores are weighted */
#pragma unroll
            for (int e = 0; e < 32; e++) SGLA_REG_PIN_F(sc[e]);

            /* ---- phase 1b: weights in fp32, A fragments in 16 bits ---- */
            float bi0 = 0.f, bi1 = 0.f;
            if (p.gmode) {
                bi0 = bw[i0];
                bi1 = bw[i1];
            }
#pragma unroll
            for (int j = 0; j < 8; j++) { /* n8 block j: keys 8j + 2tig, +1 */
                const int j0 = 8 * j + 2 * tig, j1 = j0 + 1;
                float e0, e1, e2, e3;
                if (p.gmode) {
                    const float bj0 = bw[j0], bj1 = bw[j1];
                    e0 = j0 <= i0 ? sc[4 * j + 0] * sgla_exp2(bi0 - bj0) : 0.f;
                    e1 = j1 <= i0 ? sc[4 * j + 1] * sgla_exp2(bi0 - bj1) : 0.f;
                    e2 = j0 <= i1 ? sc[4 * j + 2] * sgla_exp2(bi1 - bj0) : 0.f;
                    e3 = j1 <= i1 ? sc[4 * j + 3] * sgla_exp2(bi1 - bj1) : 0.f;
                } else {
                    e0 = j0 <= i0 ? sc[4 * j + 0] : 0.f;
                    e1 = j1 <= i0 ? sc[4 * j + 1] : 0.f;
                    e2 = j0 <= i1 ? sc[4 * j + 2] : 0.f;
                    e3 = j1 <= i1 ? sc[4 * j + 3] : 0.f;
                }
                /* A fragment of k-step j/2: {row i0, keys 2tig..}, {i1, 2tig..}, {i0, 2tig+8..}, {i1, 2tig+8..} */
                af[j >> 1][2 * (j & 1) + 0] = T6_PACK(e0, e1);
                af[j >> 1][2 * (j & 1) + 1] = T6_PACK(e2, e3);
            }
            SGLA_WG_WAIT(0); /* Q.S done */
#pragma unroll
            for (int e = 0; e < T6_N1 / 2; e++) SGLA_REG_PIN_F(acc[e]);
            if (p.gmode) {
                const float w0 = sgla_exp2(bi0), w1 = sgla_exp2(bi1);
#pragma unroll
                for (int j = 0; j < T6_N1 / 8; j++) {
                    acc[4 * j + 0] *= w0;
                    acc[4 * j + 1] *= w0;
                    acc[4 * j + 2] *= w1;
                    acc[4 * j + 3] *= w1;
                }
            }
            /* ---- phase 1c: acc += A V[:, cols] (waited for after the state update's operands are built) ---- */
            sgla_wg_fence();
#pragma unroll
            for (int kk = 0; kk < 4; kk++) T6_RS_T1(acc, af[kk], dV + (uint64_t)(kk * 2 * T6_BV));
            sgla_wg_commit();
        }

        /* ---- phase 2: S = exp2(b_last) S + (K exp2(b_last - b))^T V[:, cols] ---- */
        if (p.gmode) {
            const float d = sgla_exp2(bC);
#pragma unroll
            for (int mt = 0; mt < T6_MT; mt++)
#pragma unroll
                for (int e = 0; e < T6_N1 / 2; e++) S[mt][e] *= d;
        }
        /* A = K^T rows 64 mt + 16 wl .. + 15 (features), k = keys 16 kk ..: ldmatrix.trans of
         * core matrices (keys 16kk + 8(j>>1) .. +7) x (features f0 + 8(j&1) .. +7), j = lane / 8 */
        uint32_t kf[T6_MT][4][4];
        {
            const int jm = lane >> 3, kr = (jm >> 1) * 8 + (lane & 7), fo = (jm & 1) * 8;
#pragma unroll
            for (int kk = 0; kk < 4; kk++) {
                float w0 = 1.f, w1 = 1.f, w2 = 1.f, w3 = 1.f;
                if (p.gmode) {
                    const int ta = 16 * kk + 2 * tig;
                    w0 = sgla_exp2(bC - bw[ta]);
                    w1 = sgla_exp2(bC - bw[ta + 1]);
                    w2 = sgla_exp2(bC - bw[ta + 8]);
                    w3 = sgla_exp2(bC - bw[ta + 9]);
                }
#pragma unroll
                for (int mt = 0; mt < T6_MT; mt++) {
                    const int key = 16 * kk + kr, f = 64 * mt + 16 * wl + fo;
                    uint32_t *ka = kf[mt][kk];
                    sgla_ldm_x4_t(ka, ks + ((key >> 3) * (T6_KD / 8) + (f >> 3)) * 128 + (key & 7) * 16);
                    if (p.gmode) {
                        float2 x;
                        x = T6_UNPACK(ka[0]); ka[0] = T6_PACK(x.x * w0, x.y * w1);
                        x = T6_UNPACK(ka[1]); ka[1] = T6_PACK(x.x * w0, x.y * w1);
                        x = T6_UNPACK(ka[2]); ka[2] = T6_PACK(x.x * w2, x.y * w3);
                        x = T6_UNPACK(ka[3]); ka[3] = T6_PACK(x.x * w2, x.y * w3);
                    }
                }
            }
        }
        if (outputs) {
            SGLA_WG_WAIT(0); /* A.V done */
#pragma unroll
            for (int e = 0; e < T6_N1 / 2; e++) SGLA_REG_PIN_F(acc[e]);
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
#pragma unroll
                for (int e = 0; e < 4; e++) SGLA_REG_PIN_R(af[kk][e]);
        }
        sgla_wg_fence();
#pragma unroll
        for (int mt = 0; mt < T6_MT; mt++)
#pragma unroll
            for (int kk = 0; kk < 4; kk++) T6_RS_T1(S[mt], kf[mt][kk], dV + (uint64_t)(kk * 2 * T6_BV));
        sgla_wg_commit();

        SGLA_WG_WAIT(0);
#pragma unroll
        for (int mt = 0; mt < T6_MT; mt++)
#pragma unroll
            for (int e = 0; e < T6_N1 / 2; e++) SGLA_REG_PIN_F(S[mt][e]);
#pragma unroll
        for (int mt = 0; mt < T6_MT; mt++)
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
#pragma unroll
                for (int e = 0; e < 4; e++) SGLA_REG_PIN_R(kf[mt][kk][e]);
        if (outputs) {
            /* o = scale * acc (rows 16 wl.., columns wg N1..), staged through this warp's own
             * rows of O_s for 16-byte stores.  Not while the state update is in flight: any
             * read of a wgmma accumulator inside an open wgmma stage makes ptxas serialize
             * every wgmma of the kernel (C7514, seen on the first build). */
#pragma unroll
            for (int j = 0; j < T6_N1 / 8; j++) {
                const int cc = wg * T6_N1 + 8 * j + 2 * tig;
                *(uint32_t *)(O_s + i0 * T6_LDO + cc) = T6_PACK(acc[4 * j + 0] * p.scale, acc[4 * j + 1] * p.scale);
                *(uint32_t *)(O_s + i1 * T6_LDO + cc) = T6_PACK(acc[4 * j + 2] * p.scale, acc[4 * j + 3] * p.scale);
            }
            __syncwarp();
#pragma unroll
            for (int i = lane; i < 16 * (T6_N1 / 8); i += 32) {
                const int rr = 16 * wl + i / (T6_N1 / 8), c8 = wg * T6_N1 + (i % (T6_N1 / 8)) * 8;
                if (rr < cl)
                    *(uint4 *)(og + ((int64_t)c * 64 + rr) * sv + c8) = *(const uint4 *)(O_s + rr * T6_LDO + c8);
            }
        }
        /* the next chunk's Q.S reads S_s[:, cols] after the loop's barrier; this WG's own
         * Q.S of this chunk (the only reader of these columns) completed above */
        if (outputs) T6_STORE_S();
    }
    SGLA_CP_WAIT(0);

    float *htp = p.mode == 1 ? p.seg_buf + (seg * p.N * p.H + nh) * T6_KD * p.V + v0
               : (p.nseg > 1 && seg != p.nseg - 1) ? (float *)0
               : p.ht ? p.ht + nh * T6_KD * p.V + v0 : (float *)0;
    if (p.mode == 1 && blockIdx.y == 0 && tid == 0) p.seg_ld[seg * p.N * p.H + nh] = ldsum;
    if (htp) {
#pragma unroll
        for (int mt = 0; mt < T6_MT; mt++)
#pragma unroll
            for (int j = 0; j < T6_N1 / 8; j++) {
                const int r = 64 * mt + 16 * wl + gid, cc = wg * T6_N1 + 8 * j + 2 * tig;
                *(float2 *)(htp + (int64_t)r * p.V + cc) = make_float2(S[mt][4 * j + 0], S[mt][4 * j + 1]);
                *(float2 *)(htp + (int64_t)(r + 8) * p.V + cc) = make_float2(S[mt][4 * j + 2], S[mt][4 * j + 3]);
            }
    }
}

#undef T6_LOAD_CHUNK
#undef T6_STORE_S
#undef T6_PACK
#undef T6_UNPACK
#undef T6_SS_T1
#undef T6_RS_T1
#undef T6_SS_QK
#undef T6_NT
#undef T6_N1
#undef T6_MT
#undef T6_QBYTES
#undef T6_VBYTES
#undef T6_STAGE_BYTES
#undef T6_LDO
#undef T6_NAME
#undef T6_KD
#undef T6_BV
#undef T6_BF16
#undef T6_MINB
