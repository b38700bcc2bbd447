/* Version 8's kernel body (see fwd_tc_v8.cu for what it tries), instantiated by
 * macros (include after defining):
 *
 *   T8_NAME   kernel name
 *   T8_KD     K (64, 128, 256)
 *   T8_BV     V columns owned by one block (64 or 128, <= KD); grid.y = V / T8_BV
 *   T8_BF16   1: bf16 operands, 0: fp16
 *   T8_ST     cp.async stages (2 or 3): chunks c + 1 .. c + ST - 1 are in flight during c
 *   T8_MINB   blocks per SM for __launch_bounds__
 *   T8_NPW    producer warpgroups: 0 (v8: every thread copies, one block barrier per
 *             chunk), 1 (v9) or 2 (v10)
 *   T8_TMA    1: one producer thread loads each stage with TMA boxes (v11, v12; T8_NPW 1,
 *             any number of stages, BV 64 or 128); the tiles are then in the 128-byte
 *             swizzled layout below instead of the no-swizzle one
 *   T8_NO     (with T8_TMA and T8_OST) output warpgroups: 1, or 2 (v13): WG 0 and WG 1 make
 *             the outputs of even and odd chunks, WG 2 carries the state, WG 3 is the
 *             producer; four S_s buffers (chunk c reads S_s[c % 4], so each buffer and its
 *             named barriers belong to one output warpgroup)
 *   T8_OST    (with T8_TMA) 1: o leaves through its own staging tile by a TMA store (v12),
 *             so a stage is released as soon as the A.V product has read it; 0: o is staged
 *             in the chunk's Q tile and stored by WG 0's threads (as v9)
 *
 * 8 warps = two specialised warpgroups (WG g = warp / 4, warp wl = warp % 4 in it):
 *   WG 0, outputs of chunk c (all BV columns, rows 16 wl .. of the chunk):
 *     sc  = Q K^T                      wgmma m64n64, A = Q, B = K (smem, K-major)
 *     acc = Q S_c                      wgmma m64nBV, A = Q, B = S_s[c & 1] (smem, N-major)
 *     sc_ij *= scale exp2(b_i - b_j) where j <= i, 0 elsewhere (never evaluated)
 *     acc *= scale exp2(b_i);  acc += sc V   wgmma m64nBV, A = sc in registers, B = V
 *     o staged (stmatrix, XOR-swizzled rows) in the chunk's Q tile, which only WG 0 reads
 *   WG 1, the state (all KD rows, BV columns, KD / 64 m-tiles in registers):
 *     S_{c+1} = exp2(b_last) S_c + (K exp2(b_last - b))^T V   wgmma m64nBV, A = K^T by
 *     ldmatrix.trans times the 16-bit weight pairs, B = V;  then S_{c+1} rounded into
 *     S_s[(c + 1) & 1] (stmatrix) for WG 0's next chunk.
 * The two warpgroups work on chunk c at the same time: WG 1 never waits for WG 0, and
 * WG 0 needs only S_c, written during chunk c - 1.
 * T8_NPW = 0: one block barrier per chunk (the top one: chunk c landed, S_s[c & 1]
 * written, everyone past chunk c - 1, so its stage and S_s[(c + 1) & 1] are free).
 * T8_NPW > 0: warpgroups 2.. are producers that alone issue the copies and give their
 * registers to WG 0 and 1 (setmaxnreg).  Stage s has two mbarriers: full[s] (one
 * arrival per producer thread: cp.async.mbarrier.arrive.noinc, i.e. when its copies
 * of the chunk landed) and empty[s] (256 arrivals: every consumer thread once it is
 * done with the stage; an arrival releases only its own thread's accesses).  WG 0 and WG 1 hand the state's 16-bit copy over
 * through named barriers (256 threads):
 *   S_READY[b] (ids 1, 2): WG 1 arrives after writing S_s[b], WG 0 syncs before Q.S;
 *   S_FREE[b]  (ids 3, 4): WG 0 arrives once its Q.S read S_s[b], WG 1 syncs before
 *                          overwriting it.
 * Every arrival is matched by exactly one sync (the last chunk writes no S_s).
 *
 * TMA layout (T8_TMA): a tile of 64 rows x D columns is D / 64 boxes of 8 KB, box b holding
 *   columns 64 b .. 64 b + 63 as 64 rows of 128 bytes, 16-byte unit u of row r at r 128 +
 *   (u ^ (r % 8)) 16 (CU_TENSOR_MAP_SWIZZLE_128B).  Q, K are K-major (descriptor sbo 1024; a
 *   k-step of 16 columns is +32 bytes inside a box, +8 KB per box), V N-major (lbo 8 KB to the
 *   next 64 columns, sbo 1024; a k-step of 16 tokens is +2 KB).  S_s keeps the layout below.
 * Shared-memory tiles use wgmma's no-swizzle canonical layouts (see fwd_tc_body6.cuh):
 *   K-major (Q, K: 64 tokens x KD): (r, c) at ((r/8)(KD/8) + c/8) 128 + (r%8) 16 + (c%8) 2;
 *     descriptor LBO 128, SBO KD*16.
 *   N-major (V: 64 x BV; S_s: KD x BV): (k, n) at ((k/8)(BV/8) + n/8) 128 + (k%8) 16 + (n%8) 2;
 *     descriptor LBO BV*16, SBO 128.
 */

#ifndef T8_NPW
#define T8_NPW 0 /* producer warpgroups */
#endif
#ifndef T8_TMA
#define T8_TMA 0
#endif
#ifndef T8_OST
#define T8_OST 0
#endif
#ifndef T8_NO
#define T8_NO 1
#endif
#define T8_NSB (2 * T8_NO)            /* S_s buffers */
#define T8_SB(c) ((c) & (T8_NSB - 1)) /* the S_s buffer chunk c reads */
#define T8_NCW (4 * (T8_NO + 1))      /* consumer warps */
#define T8_NP (128 * T8_NPW)      /* producer threads */
#define T8_NT (32 * T8_NCW + T8_NP) /* consumer warpgroups + the producers */
#if T8_NO == 2
#define T8_REG_P "40"  /* setmaxnreg: 128 x (40 + 136) + 256 x 160 = 62 K registers */
#define T8_REG_O "160"
#define T8_REG_S "136"
#elif T8_NPW == 1
#define T8_REG_P "40"  /* setmaxnreg: 128 x 40 + 256 x 232 = 64 K registers */
#define T8_REG_C "232"
#elif T8_NPW == 2
#define T8_REG_P "32"  /* 256 x 32 + 256 x 224 = 64 K registers */
#define T8_REG_C "224"
#endif

/* Shared memory of one instance (must match the layout in the kernel): ST stages of
 * Q, K (64 x KD) and V (64 x BV) in core-matrix order; two S_s (KD x BV); g [ST][64]
 * f32; b [8][64] f32; with producers, full[ST] and empty[ST] mbarriers. */
#ifndef T8_SMEM
#define T8_SMEM(kd, bv, st, npw)                                                               \
    ((size_t)(st) * (256 * (kd) + 128 * (bv)) + (size_t)4 * (kd) * (bv) + (st) * 256 + 2048 + ((npw) ? (st) * 16 : 0))
/* with TMA: the same, plus o's own staging tile (64 x BV) when ost */
#define T8_SMEM_TMA(kd, bv, st, ost) (T8_SMEM(kd, bv, st, 1) + ((ost) ? (size_t)128 * (bv) : 0))
/* two output warpgroups (T8_NO 2): four S_s, two o tiles, b [12][64] */
#define T8_SMEM_NO2(kd, bv, st) (T8_SMEM_TMA(kd, bv, st, 1) + (size_t)4 * (kd) * (bv) + 128 * (bv) + 1024)
#endif
#define T8_MT (T8_KD / 64)
#define T8_NR (T8_BV / 2) /* f32 accumulator registers of a m64 x BV product */
#define T8_QBYTES (64 * T8_KD * 2)
#define T8_VBYTES (64 * T8_BV * 2)
#define T8_STAGE_BYTES (2 * T8_QBYTES + T8_VBYTES)
#define T8_SBYTES (T8_KD * T8_BV * 2)
#define T8_QK_IT (T8_KD / 32)        /* 16-byte copies of Q (and of K) per thread and chunk */
#define T8_QK_RS (2048 / T8_KD)      /* rows between them */
#define T8_V_IT (T8_BV / 32)
#define T8_V_RS (2048 / T8_BV)
#define T8_O_UNITS (T8_BV / 8)       /* 16-byte units in an o row */
#define T8_O_RS (32 / T8_O_UNITS)    /* o rows between one lane's copies */

#if T8_BV > T8_KD || (!T8_TMA && T8_ST != 2 && T8_ST != 3) || T8_ST < 2
#error "fwd_tc_body8.cuh: BV <= KD (o is staged in the Q tile), 2 or 3 stages (TMA: 2 or more)"
#endif
#if T8_TMA && (T8_NPW != 1 || (T8_BV != 64 && T8_BV != 128))
#error "fwd_tc_body8.cuh: TMA needs one producer warpgroup and BV 64 or 128"
#endif
#if T8_NO != 1 && (T8_NO != 2 || !T8_TMA || !T8_OST)
#error "fwd_tc_body8.cuh: two output warpgroups need TMA and the TMA o store"
#endif
/* k-step kk (16 columns of the reduction) as an increment of a descriptor's address field
 * (bytes / 16): Q and K (K-major), V (N-major, 16 tokens) */
/* byte offset of o's 16-byte unit u in row r of its staging tile (64 x BV): the TMA layout, or
 * rows of BV * 2 bytes with the unit index XOR-swizzled by r % 8 */
#if T8_TMA
#define T8_OADDR(r, u) ((((u) >> 3) << 13) + (r) * 128 + ((((u) & 7) ^ ((r) & 7)) << 4))
#else
#define T8_OADDR(r, u) ((r) * T8_BV * 2 + (((u) ^ ((r) & 7)) * 16))
#endif
#if T8_TMA
#define T8_AK(kk) ((uint64_t)(((kk) >> 2) * 512 + ((kk) & 3) * 2))
#define T8_VK(kk) ((uint64_t)((kk) * 128))
#else
#define T8_AK(kk) ((uint64_t)((kk) * 16))
#define T8_VK(kk) ((uint64_t)((kk) * 2 * T8_BV))
#endif

#if T8_BF16
#define T8_PACK sgla_pack_bf16
#define T8_MUL2 sgla_mul2_bf16
#define T8_SS_QK sgla_wg_ss_n64_t0_bf16
#if T8_BV == 128
#define T8_SS_T1 sgla_wg_ss_n128_t1_bf16
#define T8_RS_T1 sgla_wg_rs_n128_t1_bf16
#else
#define T8_SS_T1 sgla_wg_ss_n64_t1_bf16
#define T8_RS_T1 sgla_wg_rs_n64_t1_bf16
#endif
#else
#define T8_PACK sgla_pack_f16
#define T8_MUL2 sgla_mul2_f16
#define T8_SS_QK sgla_wg_ss_n64_t0_f16
#if T8_BV == 128
#define T8_SS_T1 sgla_wg_ss_n128_t1_f16
#define T8_RS_T1 sgla_wg_rs_n128_t1_f16
#else
#define T8_SS_T1 sgla_wg_ss_n64_t1_f16
#define T8_RS_T1 sgla_wg_rs_n64_t1_f16
#endif
#endif

#if T8_TMA
__global__ void __launch_bounds__(T8_NT, T8_MINB) T8_NAME(const sgla_kparams p, const __grid_constant__ sgla_tmaps tm)
#else
__global__ void __launch_bounds__(T8_NT, T8_MINB) T8_NAME(const sgla_kparams p)
#endif
{
    extern __shared__ __align__(1024) unsigned char tc_smem[];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
    const int wg = warp >> 2, wl = warp & 3;
    const int64_t nh = blockIdx.x / p.nseg, seg = blockIdx.x - nh * p.nseg;
    const int64_t n = nh / p.H, h = nh - n * p.H;
    const int v0 = blockIdx.y * T8_BV;
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
    const int64_t row0 = (bidx * p.T + t0) * p.H + h;
    /* (with TMA the tensor maps address q, k, v and o but for the last chunk of a sequence
     * of cu_seqlens, whose boxes would reach into the next sequence: the pointers are then made
     * where they are used, so that they are not live across setmaxnreg) */
#define T8_PTRS_IN()                                                                           \
    const int64_t sv = p.H * p.V; /* token stride of v and o */                                \
    const int64_t sq = p.H * T8_KD;                                                            \
    const uint16_t *qg = (const uint16_t *)p.q + row0 * T8_KD;                                 \
    const uint16_t *kg = (const uint16_t *)p.k + row0 * T8_KD;                                 \
    const uint16_t *vg = (const uint16_t *)p.v + row0 * p.V + v0
#define T8_PTRS_OUT()                                                                          \
    const int64_t sv = p.H * p.V;                                                              \
    uint16_t *og = (uint16_t *)p.o + row0 * p.V + v0
#if !T8_TMA
    T8_PTRS_IN();
    uint16_t *og = (uint16_t *)p.o + row0 * p.V + v0;
#endif
    const float *gg = p.gmode == SGLA_GATE_G ? p.g + row0 : (const float *)0;
    const float gl2 = p.gmode == SGLA_GATE_GAMMA ? p.g_gamma[h] * SGLA_LOG2E : 0.f;

    /* shared memory: must match T8_SMEM above */
    unsigned char *st_base = tc_smem;                                          /* [ST][Q | K | V] */
    unsigned char *S_s = tc_smem + T8_ST * T8_STAGE_BYTES;                      /* [NSB] KD x BV, N-major */
#if T8_TMA && T8_OST
    unsigned char *o_s = S_s + T8_NSB * T8_SBYTES;                              /* [NO] 64 x BV, TMA layout */
    float *g_s = (float *)(o_s + T8_NO * 64 * T8_BV * 2);                       /* [ST][64] */
#else
    float *g_s = (float *)(S_s + 2 * T8_SBYTES);                                /* [ST][64] */
#endif
    float *b_s = g_s + T8_ST * 64;                                              /* [NCW][64] */
#if T8_NPW
    uint64_t *mbar = (uint64_t *)(b_s + T8_NCW * 64);                           /* full[ST], empty[ST] */
    float *bw = b_s + (T8_NO == 1 ? warp & 7 : warp % T8_NCW) * 64; /* the producer has none */
#else
    float *bw = b_s + warp * 64;
#endif
    const uint32_t st_u32 = sgla_smem_u32(st_base), S_u32 = sgla_smem_u32(S_s);

#if T8_NPW
    const uint32_t full_u32 = sgla_smem_u32(mbar), empty_u32 = full_u32 + 8 * T8_ST;
    if (tid == 0) {
#if T8_TMA
        if (st_u32 & 1023) __trap(); /* the 128-byte swizzle needs 1 KB-aligned tiles */
#endif
        for (int i = 0; i < T8_ST; i++) {
#if T8_TMA
            /* lane 0's arrival (with the TMA byte count) + the 32 lanes' (storing g, or the tiles
             * of a cu_seqlens sequence's last chunk) */
            sgla_mbar_init(full_u32 + 8 * i, gg || p.cu ? 33 : 1);
#else
            sgla_mbar_init(full_u32 + 8 * i, T8_NP);
#endif
            sgla_mbar_init(empty_u32 + 8 * i, 256); /* every consumer thread */
        }
        sgla_mbar_init_fence();
    }
    __syncthreads(); /* the only block-wide barrier: the mbarriers exist */

    if (wg >= T8_NO + 1) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 " T8_REG_P ";\n" ::: "memory");
#if T8_TMA
        /* ---- the producer: its first warp alone; lane 0 arms full[s] with the stage's byte
         * count and issues the boxes; the 32 lanes store the chunk's gate g, loaded (plain
         * loads) one chunk ahead, and arrive ---- */
        if (warp != T8_NCW) return;
        T8_PTRS_IN();
        const uint32_t tx = (outputs ? T8_QBYTES : 0) + T8_QBYTES + T8_VBYTES;
        const int tb = (int)bidx, th = (int)h;
        if (lane == 0) {
            if (outputs) sgla_tma_prefetch_map(&tm.q);
            sgla_tma_prefetch_map(&tm.k);
            sgla_tma_prefetch_map(&tm.v);
        }
        float gr0 = 0.f, gr1 = 0.f; /* g of rows lane, lane + 32 of the next chunk (0 past its end) */
#define T8_LOAD_G(cc)                                                                          \
    do {                                                                                       \
        const int64_t tk0_ = (int64_t)(cc) * 64;                                               \
        const int cl_ = (int)(len - tk0_ < 64 ? len - tk0_ : 64);                              \
        gr0 = lane < cl_ ? __ldg(gg + (tk0_ + lane) * p.H) : 0.f;                              \
        gr1 = lane + 32 < cl_ ? __ldg(gg + (tk0_ + lane + 32) * p.H) : 0.f;                    \
    } while (0)
        if (gg && nchunks > 0) T8_LOAD_G(0);
        int s = 0;
        for (int c = 0; c < nchunks; c++) {
            if (c >= T8_ST) sgla_mbar_wait(empty_u32 + 8 * s, (uint32_t)((c / T8_ST - 1) & 1));
            const uint32_t qs = st_u32 + s * T8_STAGE_BYTES, ks = qs + T8_QBYTES, vs = ks + T8_QBYTES;
            const int tt = (int)(t0 + (int64_t)c * 64); /* token in the batch row: rows past T read as 0 */
            const int64_t tk0 = (int64_t)c * 64;
            const int cl = (int)(len - tk0 < 64 ? len - tk0 : 64);
            if (p.cu && cl < 64) {
                /* a sequence's last chunk in a packed batch: the lanes copy the rows that exist and
                 * zero the rest (a box would read the next sequence), in the TMA layout */
                if (lane == 0) sgla_mbar_arrive(full_u32 + 8 * s);
                const uint4 z = make_uint4(0, 0, 0, 0);
                for (int i = lane; i < 64 * T8_KD / 8; i += 32) {
                    const int r = i / (T8_KD / 8), u = i % (T8_KD / 8);
                    const uint32_t off = (uint32_t)(((u >> 3) << 13) + r * 128 + (((u & 7) ^ (r & 7)) << 4));
                    const int64_t go = (tk0 + r) * sq + u * 8;
                    if (outputs) sgla_st_shared16(qs + off, r < cl ? __ldg((const uint4 *)(qg + go)) : z);
                    sgla_st_shared16(ks + off, r < cl ? __ldg((const uint4 *)(kg + go)) : z);
                }
                for (int i = lane; i < 64 * T8_BV / 8; i += 32) {
                    const int r = i / (T8_BV / 8), u = i % (T8_BV / 8);
                    const uint32_t off = (uint32_t)(((u >> 3) << 13) + r * 128 + (((u & 7) ^ (r & 7)) << 4));
                    sgla_st_shared16(vs + off, r < cl ? __ldg((const uint4 *)(vg + (tk0 + r) * sv + u * 8)) : z);
                }
                sgla_fence_proxy_async(); /* read next by wgmma */
            } else if (lane == 0) {
                sgla_mbar_arrive_tx(full_u32 + 8 * s, tx);
#pragma unroll
                for (int b = 0; b < T8_KD / 64; b++) {
                    if (outputs) sgla_tma_load4(qs + b * 8192, &tm.q, 64 * b, th, tt, tb, full_u32 + 8 * s);
                    sgla_tma_load4(ks + b * 8192, &tm.k, 64 * b, th, tt, tb, full_u32 + 8 * s);
                }
#pragma unroll
                for (int b = 0; b < T8_BV / 64; b++)
                    sgla_tma_load4(vs + b * 8192, &tm.v, v0 + 64 * b, th, tt, tb, full_u32 + 8 * s);
            }
            if (gg) {
                g_s[s * 64 + lane] = gr0;
                g_s[s * 64 + lane + 32] = gr1;
            }
            if (gg || p.cu) sgla_mbar_arrive(full_u32 + 8 * s); /* release: this lane's stores above */
            if (gg && c + 1 < nchunks) T8_LOAD_G(c + 1);
            s = s + 1 == T8_ST ? 0 : s + 1;
        }
#undef T8_LOAD_G
        return;
#else
        /* ---- the producer: thread pt copies the 16-byte pieces i = pt + NP n of each tile
         * (core-matrix order: piece i at byte 16 i is row (i / KD) 8 + (i & 7), columns
         * ((i / 8) % (KD / 8)) 8 ..; V likewise with BV) ---- */
        const int pt = tid - 256;
        int s = 0;
        for (int c = 0; c < nchunks; c++) {
            if (c >= T8_ST) sgla_mbar_wait(empty_u32 + 8 * s, (uint32_t)((c / T8_ST - 1) & 1));
            const int64_t tk0 = (int64_t)c * 64;
            const int cl = (int)(len - tk0 < 64 ? len - tk0 : 64);
            const uint32_t qs = st_u32 + s * T8_STAGE_BYTES, ks = qs + T8_QBYTES, vs = ks + T8_QBYTES;
            const uint16_t *qp = qg + tk0 * sq, *kp = kg + tk0 * sq, *vp = vg + tk0 * sv;
#pragma unroll
            for (int i = pt; i < 64 * T8_KD / 8; i += T8_NP) {
                const int r = (i / T8_KD) * 8 + (i & 7), c8 = ((i >> 3) % (T8_KD / 8)) * 8;
                const int ok = r < cl;
                const int64_t off = ok ? (int64_t)r * sq + c8 : 0;
                if (outputs) sgla_cp16(qs + i * 16, qp + off, ok ? 16 : 0);
                sgla_cp16(ks + i * 16, kp + off, ok ? 16 : 0);
            }
#pragma unroll
            for (int i = pt; i < 64 * T8_BV / 8; i += T8_NP) {
                const int r = (i / T8_BV) * 8 + (i & 7), c8 = ((i >> 3) % (T8_BV / 8)) * 8;
                const int ok = r < cl;
                sgla_cp16(vs + i * 16, vp + (ok ? (int64_t)r * sv + c8 : 0), ok ? 16 : 0);
            }
            if (gg && pt < 64) {
                const int ok = pt < cl;
                sgla_cp4(sgla_smem_u32(g_s + s * 64 + pt), gg + (ok ? (tk0 + pt) * p.H : 0), ok ? 4 : 0);
            }
            sgla_cp_mbar_arrive(full_u32 + 8 * s);
            s = s + 1 == T8_ST ? 0 : s + 1;
        }
        SGLA_CP_WAIT(0);
        return;
#endif
    }
#if T8_NO == 2
    if (wg < T8_NO)
        asm volatile("setmaxnreg.inc.sync.aligned.u32 " T8_REG_O ";\n" ::: "memory");
    else
        asm volatile("setmaxnreg.inc.sync.aligned.u32 " T8_REG_S ";\n" ::: "memory");
#else
    asm volatile("setmaxnreg.inc.sync.aligned.u32 " T8_REG_C ";\n" ::: "memory");
#endif
#else
    /* this thread's cp.async slots, the same in every full chunk: the i-th 16-byte piece of
     * a tile is byte 16 i of it (core-matrix order), i = tid + 256 n, so piece n sits at
     * row ld_r + n * T8_QK_RS (V: lv_r + n * T8_V_RS) of the chunk */
    const int ld_r = (tid / T8_KD) * 8 + (tid & 7), ld_c = ((tid >> 3) % (T8_KD / 8)) * 8;
    const int lv_r = (tid / T8_BV) * 8 + (tid & 7), lv_c = ((tid >> 3) % (T8_BV / 8)) * 8;
    const uint16_t *qg_t = qg + (int64_t)ld_r * sq + ld_c, *kg_t = kg + (int64_t)ld_r * sq + ld_c;
    const uint16_t *vg_t = vg + (int64_t)lv_r * sv + lv_c;

#define T8_LOAD_CHUNK(cc, ss)                                                                  \
    do {                                                                                       \
        const int64_t tk0_ = (int64_t)(cc) * 64;                                               \
        const int cl_ = (int)(len - tk0_ < 64 ? len - tk0_ : 64);                              \
        const uint32_t qs_ = st_u32 + (ss) * T8_STAGE_BYTES, ks_ = qs_ + T8_QBYTES, vs_ = ks_ + T8_QBYTES; \
        if (cl_ == 64) {                                                                       \
            const uint16_t *qp_ = qg_t + tk0_ * sq, *kp_ = kg_t + tk0_ * sq, *vp_ = vg_t + tk0_ * sv; \
            _Pragma("unroll") for (int n_ = 0; n_ < T8_QK_IT; n_++)                            \
            {                                                                                  \
                if (outputs) sgla_cp16(qs_ + (tid + 256 * n_) * 16, qp_ + n_ * T8_QK_RS * sq, 16); \
                sgla_cp16(ks_ + (tid + 256 * n_) * 16, kp_ + n_ * T8_QK_RS * sq, 16);           \
            }                                                                                  \
            _Pragma("unroll") for (int n_ = 0; n_ < T8_V_IT; n_++)                             \
                sgla_cp16(vs_ + (tid + 256 * n_) * 16, vp_ + n_ * T8_V_RS * sv, 16);            \
        } else {                                                                               \
            _Pragma("unroll") for (int i_ = tid; i_ < 64 * T8_KD / 8; i_ += T8_NT)             \
            {                                                                                  \
                const int r_ = (i_ / T8_KD) * 8 + (i_ & 7), c8_ = ((i_ >> 3) % (T8_KD / 8)) * 8; \
                const int ok_ = r_ < cl_;                                                      \
                const int64_t off_ = ok_ ? (tk0_ + r_) * sq + c8_ : 0;                         \
                if (outputs) sgla_cp16(qs_ + i_ * 16, qg + off_, ok_ ? 16 : 0);                \
                sgla_cp16(ks_ + i_ * 16, kg + off_, ok_ ? 16 : 0);                             \
            }                                                                                  \
            _Pragma("unroll") for (int i_ = tid; i_ < 64 * T8_BV / 8; i_ += T8_NT)             \
            {                                                                                  \
                const int r_ = (i_ / T8_BV) * 8 + (i_ & 7), c8_ = ((i_ >> 3) % (T8_BV / 8)) * 8; \
                const int ok_ = r_ < cl_;                                                      \
                const int64_t off_ = ok_ ? (tk0_ + r_) * sv + c8_ : 0;                         \
                sgla_cp16(vs_ + i_ * 16, vg + off_, ok_ ? 16 : 0);                             \
            }                                                                                  \
        }                                                                                      \
        if (gg && tid < 64) {                                                                  \
            const int ok_ = tid < cl_;                                                         \
            sgla_cp4(sgla_smem_u32(g_s + (ss) * 64 + tid), gg + (ok_ ? (tk0_ + tid) * p.H : 0), \
                     ok_ ? 4 : 0);                                                             \
        }                                                                                      \
    } while (0)
#endif

    /* the top of every chunk, in both warpgroups' loops: chunk c landed (full[s]; without
     * producers this thread's copies, then everyone's: barrier 1, all 256 threads, which also
     * means S_s[c & 1] is written and everyone is past chunk c - 1, so its stage is free for
     * chunk c + ST - 1), and this warp's copy of the chunk-local cumulative log2 gate b */
#if T8_NPW
#define T8_CHUNK_WAIT()                                                                        \
    sgla_mbar_wait(full_u32 + 8 * s, (uint32_t)((c / T8_ST) & 1));                            \
    sgla_fence_proxy_async() /* the producer's copies are read next by wgmma */
#else
#define T8_CHUNK_WAIT()                                                                        \
    SGLA_CP_WAIT(T8_ST - 2);                                                                   \
    sgla_fence_proxy_async(); /* this thread's copies are read next by wgmma */                \
    sgla_bar_sync(1, T8_NT);                                                                   \
    if (c + T8_ST - 1 < nchunks) T8_LOAD_CHUNK(c + T8_ST - 1, s == 0 ? T8_ST - 1 : s - 1);     \
    sgla_cp_commit()
#endif
#if T8_TMA
#define T8_DESC_A(a) sgla_wg_desc_sw128(a, 16, 1024)
#define T8_DESC_V(a) sgla_wg_desc_sw128(a, 8192, 1024)
#else
#define T8_DESC_A(a) sgla_wg_desc(a, 128, T8_KD * 16)
#define T8_DESC_V(a) sgla_wg_desc(a, T8_BV * 16, 128)
#endif
#define T8_CHUNK_TOP()                                                                         \
    T8_CHUNK_WAIT();                                                                           \
    const int cl = (int)(len - (int64_t)c * 64 < 64 ? len - (int64_t)c * 64 : 64);             \
    const uint32_t qs = st_u32 + s * T8_STAGE_BYTES, ks = qs + T8_QBYTES, vs = ks + T8_QBYTES; \
    const uint64_t dV = T8_DESC_V(vs);                                                         \
    if (T8_NPW) __syncwarp(); /* every lane is done reading bw of the previous chunk */        \
    if (p.gmode == SGLA_GATE_G) {                                                              \
        float x0 = g_s[s * 64 + lane] * SGLA_LOG2E, x1 = g_s[s * 64 + lane + 32] * SGLA_LOG2E; \
        _Pragma("unroll") for (int off = 1; off < 32; off <<= 1)                               \
        {                                                                                      \
            const float y0 = __shfl_up_sync(0xffffffffu, x0, off);                             \
            const float y1 = __shfl_up_sync(0xffffffffu, x1, off);                             \
            if (lane >= off) {                                                                 \
                x0 += y0;                                                                      \
                x1 += y1;                                                                      \
            }                                                                                  \
        }                                                                                      \
        x1 += __shfl_sync(0xffffffffu, x0, 31);                                                \
        bw[lane] = x0;                                                                         \
        bw[lane + 32] = x1;                                                                    \
    } else if (p.gmode == SGLA_GATE_GAMMA) {                                                   \
        bw[lane] = gl2 * (float)(lane + 1 < cl ? lane + 1 : cl);                               \
        bw[lane + 32] = gl2 * (float)(lane + 33 < cl ? lane + 33 : cl);                        \
    }                                                                                          \
    __syncwarp();                                                                              \
    const float bC = p.gmode ? bw[63] : 0.f

#if T8_NPW
/* every consumer thread arrives (256 a stage): an arrival releases only its own thread's
 * reads and writes of the stage, which the producer then overwrites */
#define T8_RELEASE_STAGE()                                                                     \
    do {                                                                                       \
        if (T8_TMA) sgla_fence_proxy_async(); /* this thread's generic accesses before TMA's */ \
        sgla_mbar_arrive(empty_u32 + 8 * s);                                                   \
    } while (0)
#else
    /* ---- prologue: chunks 0 .. ST-2 in flight (one commit group each, empty or not) ---- */
#pragma unroll
    for (int i = 0; i < T8_ST - 1; i++) {
        if (i < nchunks) T8_LOAD_CHUNK(i, i);
        sgla_cp_commit();
    }
#define T8_RELEASE_STAGE() (void)0 /* the next chunk's top barrier frees it */
#endif

    /* named barriers (256 threads: the state warpgroup and the output warpgroup of the buffer;
     * the o barrier: one output warpgroup) */
#define T8_BAR_READY(b) (1 + (b))
#define T8_BAR_FREE(b) (1 + T8_NSB + (b))
#define T8_BAR_O(wo) (1 + 2 * T8_NSB + (wo))
#if T8_NO == 1
#define T8_NEXT_OUT_S(s) (s + 1 == T8_ST ? 0 : s + 1)
#else
#define T8_NEXT_OUT_S(s) (s + T8_NO >= T8_ST ? s + T8_NO - T8_ST : s + T8_NO)
#endif

    /* Each warpgroup runs its own loop, so the state's registers are live only in its own. */
    if (T8_NO == 1 ? wg == 0 : wg < T8_NO) {
        const int wo = T8_NO == 1 ? 0 : wg; /* this output warpgroup makes chunks wo, wo + NO, .. */
#if T8_TMA
        T8_PTRS_OUT();
#endif
        const int i0 = 16 * wl + gid, i1 = i0 + 8; /* this thread's rows */
        const float scl = p.scale;
        /* o copy-out by threads (with the TMA o store: only a cu_seqlens sequence's last chunk):
         * this lane's rows o_r + m * T8_O_RS, 16-byte unit o_u */
        const int o_r = 16 * wl + lane / T8_O_UNITS, o_u = lane % T8_O_UNITS;
        uint16_t *og_t = og + (int64_t)o_r * sv + o_u * 8;
        /* stmatrix row of this lane for o (row-major BV columns in the Q tile, 16-byte unit u
         * of row r at r * BV * 2 + (u ^ (r & 7)) * 16): row 16 wl + (lane & 7) + 8 ((lane >> 3) & 1) */
        const int os_r = 16 * wl + (lane & 7) + ((lane >> 3) & 1) * 8;
/* o (this warp's 16 rows, 16-bit) into a staging tile at shared address base */
#define T8_STAGE_O(base)                                                                       \
    _Pragma("unroll") for (int jb = 0; jb < T8_BV / 16; jb++)                                  \
    {                                                                                          \
        const int u = 2 * jb + (lane >> 4);                                                    \
        sgla_stm_x4((base) + T8_OADDR(os_r, u), T8_PACK(acc[8 * jb + 0], acc[8 * jb + 1]),      \
                    T8_PACK(acc[8 * jb + 2], acc[8 * jb + 3]), T8_PACK(acc[8 * jb + 4], acc[8 * jb + 5]), \
                    T8_PACK(acc[8 * jb + 6], acc[8 * jb + 7]));                                \
    }
/* the rows of chunk c that exist, from the staging tile at os (generic pointer) to o */
#define T8_COPY_O(os_)                                                                         \
    do {                                                                                       \
        const unsigned char *os = (os_);                                                       \
        uint16_t *op = og_t + (int64_t)c * 64 * sv;                                            \
        _Pragma("unroll") for (int m = 0; m < 16 / T8_O_RS; m++)                               \
        {                                                                                      \
            const int r = o_r + m * T8_O_RS;                                                   \
            if (r < cl) *(uint4 *)(op + m * T8_O_RS * sv) = *(const uint4 *)(os + T8_OADDR(r, o_u)); \
        }                                                                                      \
    } while (0)
        int s = wo; /* stage of chunk c */
#if T8_NPW
        /* S_FREE of the buffers the state warpgroup writes first (S_1 .. S_{NSB-1}): nobody read them */
#if T8_NO == 1
        if (outputs && nchunks >= 2) sgla_bar_arrive(T8_BAR_FREE(1), 256);
#else
#pragma unroll
        for (int b = 1; b < T8_NSB; b++)
            if (b % T8_NO == wo && outputs && b < nchunks) sgla_bar_arrive(T8_BAR_FREE(b), 256);
#endif
#endif
        for (int c = wo; c < nchunks; c += T8_NO) {
            T8_CHUNK_TOP();
            (void)bC;
            if (outputs) {
#if T8_NPW
                sgla_bar_sync(T8_BAR_READY(T8_SB(c)), 256); /* S_c is in S_s[c % NSB] */
#endif
                const uint64_t dQ = T8_DESC_A(qs);
                const uint64_t dK = T8_DESC_A(ks);
                const uint64_t dS = sgla_wg_desc(S_u32 + T8_SB(c) * T8_SBYTES, T8_BV * 16, 128);
                float acc[T8_NR], sc[32];
                uint32_t af[4][4];
#pragma unroll
                for (int e = 0; e < T8_NR; e++) acc[e] = 0.f;
#pragma unroll
                for (int e = 0; e < 32; e++) sc[e] = 0.f;
                sgla_wg_fence();
#pragma unroll
                for (int kk = 0; kk < T8_KD / 16; kk++)
                    T8_SS_QK(sc, dQ + T8_AK(kk), dK + T8_AK(kk));
                sgla_wg_commit();
#pragma unroll
                for (int kk = 0; kk < T8_KD / 16; kk++)
                    T8_SS_T1(acc, dQ + T8_AK(kk), dS + (uint64_t)(kk * 2 * T8_BV)); /* S_s: +16 rows */
                sgla_wg_commit();
                SGLA_WG_WAIT(1); /* Q.K^T done; Q.S may still run while the scores are weighted */
#pragma unroll
                for (int e = 0; e < 32; e++) SGLA_REG_PIN_F(sc[e]);

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
                        e0 = j0 <= i0 ? sc[4 * j + 0] * (sgla_exp2(bi0 - bj0) * scl) : 0.f;
                        e1 = j1 <= i0 ? sc[4 * j + 1] * (sgla_exp2(bi0 - bj1) * scl) : 0.f;
                        e2 = j0 <= i1 ? sc[4 * j + 2] * (sgla_exp2(bi1 - bj0) * scl) : 0.f;
                        e3 = j1 <= i1 ? sc[4 * j + 3] * (sgla_exp2(bi1 - bj1) * scl) : 0.f;
                    } else {
                        e0 = j0 <= i0 ? sc[4 * j + 0] * scl : 0.f;
                        e1 = j1 <= i0 ? sc[4 * j + 1] * scl : 0.f;
                        e2 = j0 <= i1 ? sc[4 * j + 2] * scl : 0.f;
                        e3 = j1 <= i1 ? sc[4 * j + 3] * scl : 0.f;
                    }
                    /* A fragment of k-step j/2: {i0, keys 2tig..}, {i1, 2tig..}, {i0, 2tig+8..}, {i1, 2tig+8..} */
                    af[j >> 1][2 * (j & 1) + 0] = T8_PACK(e0, e1);
                    af[j >> 1][2 * (j & 1) + 1] = T8_PACK(e2, e3);
                }
                SGLA_WG_WAIT(0); /* Q.S done */
#pragma unroll
                for (int e = 0; e < T8_NR; e++) SGLA_REG_PIN_F(acc[e]);
#if T8_NPW
                /* S_FREE: this buffer gets S_{c+NSB}, written in the state's chunk c + NSB - 1 */
                if (c + T8_NSB < nchunks) sgla_bar_arrive(T8_BAR_FREE(T8_SB(c)), 256);
#endif
                {
                    const float w0 = p.gmode ? sgla_exp2(bi0) * scl : scl;
                    const float w1 = p.gmode ? sgla_exp2(bi1) * scl : scl;
#pragma unroll
                    for (int j = 0; j < T8_BV / 8; j++) {
                        acc[4 * j + 0] *= w0;
                        acc[4 * j + 1] *= w0;
                        acc[4 * j + 2] *= w1;
                        acc[4 * j + 3] *= w1;
                    }
                }
                sgla_wg_fence();
#pragma unroll
                for (int kk = 0; kk < 4; kk++) T8_RS_T1(acc, af[kk], dV + T8_VK(kk));
                sgla_wg_commit();
                SGLA_WG_WAIT(0);
#pragma unroll
                for (int e = 0; e < T8_NR; e++) SGLA_REG_PIN_F(acc[e]);
#pragma unroll
                for (int kk = 0; kk < 4; kk++)
#pragma unroll
                    for (int e = 0; e < 4; e++) SGLA_REG_PIN_R(af[kk][e]);

#if T8_TMA && T8_OST
                /* the stage's last reader is done; o goes through o_s: wait until the previous
                 * chunk's TMA store has read it, fill it, then one thread stores the boxes */
                T8_RELEASE_STAGE();
                if (tid == 128 * wo) sgla_bulk_wait_read0();
                sgla_bar_sync(T8_BAR_O(wo), 128);
                const uint32_t o_u32 = sgla_smem_u32(o_s) + wo * 64 * T8_BV * 2;
                T8_STAGE_O(o_u32);
                sgla_fence_proxy_async(); /* read next by the TMA store */
                sgla_bar_sync(T8_BAR_O(wo), 128);
                if (p.cu && cl < 64) { /* the rows of this sequence only: a box would reach the next */
                    T8_COPY_O(o_s + wo * 64 * T8_BV * 2);
                } else if (tid == 128 * wo) {
                    const int tt = (int)(t0 + (int64_t)c * 64); /* rows past T are not written */
#pragma unroll
                    for (int b = 0; b < T8_BV / 64; b++) sgla_tma_store4(&tm.o, o_u32 + b * 8192, v0 + 64 * b, (int)h, tt, (int)bidx);
                    sgla_bulk_commit();
                }
#else
                /* o into this warp's 16 rows of the chunk's Q tile (its wgmma reads are complete;
                 * only WG 0 reads Q), then 16-byte stores of the rows that exist */
                T8_STAGE_O(qs);
                __syncwarp();
                T8_COPY_O(st_base + s * T8_STAGE_BYTES);
#endif
            }
#if T8_TMA && T8_OST
            if (!outputs) T8_RELEASE_STAGE();
#else
            T8_RELEASE_STAGE();
#endif
            s = T8_NEXT_OUT_S(s);
        }
#if T8_TMA && T8_OST
        if (tid == 128 * wo) sgla_bulk_wait0(); /* the last o stores are complete before the block ends */
#endif
    } else {
        /* ---- WG 1: the state; m-tile mt holds rows 64 mt + 16 wl + gid (+8), columns
         * 8 j + 2 tig (+1) in S[mt][4 j ..] (the wgmma D fragment) ---- */
        float S[T8_MT][T8_NR];
        /* stmatrix address of this lane in S_s: row 64 mt + 16 wl + (lane & 7) + 8 ((lane >> 3) & 1),
         * 8-column block 2 jj + (lane >> 4); per (mt, jj) + (mt * 8 * (BV/8) + 2 jj) * 128 bytes */
        const int st_k = 16 * wl + (lane & 7) + ((lane >> 3) & 1) * 8;
        const uint32_t st_off = (uint32_t)(((st_k >> 3) * (T8_BV / 8) + (lane >> 4)) * 128 + (st_k & 7) * 16);
#define T8_STORE_S(buf)                                                                        \
    do {                                                                                       \
        const uint32_t d_ = S_u32 + (buf) * T8_SBYTES + st_off;                                \
        _Pragma("unroll") for (int mt = 0; mt < T8_MT; mt++)                                   \
            _Pragma("unroll") for (int jj = 0; jj < T8_BV / 16; jj++)                          \
                sgla_stm_x4(d_ + (mt * 8 * (T8_BV / 8) + 2 * jj) * 128,                        \
                            T8_PACK(S[mt][8 * jj + 0], S[mt][8 * jj + 1]),                     \
                            T8_PACK(S[mt][8 * jj + 2], S[mt][8 * jj + 3]),                     \
                            T8_PACK(S[mt][8 * jj + 4], S[mt][8 * jj + 5]),                     \
                            T8_PACK(S[mt][8 * jj + 6], S[mt][8 * jj + 7]));                    \
        sgla_fence_proxy_async(); /* these stores are read next by wgmma */                    \
    } while (0)
        {
            const float *h0p = p.mode == 2 ? p.seg_buf + (seg * p.N * p.H + nh) * T8_KD * p.V + v0
                               : p.mode == 1 ? (const float *)0
                               : p.h0 ? p.h0 + nh * T8_KD * p.V + v0 : (const float *)0;
#pragma unroll
            for (int mt = 0; mt < T8_MT; mt++)
#pragma unroll
                for (int j = 0; j < T8_BV / 8; j++) {
                    const int r = 64 * mt + 16 * wl + gid, cc = 8 * j + 2 * tig;
                    if (h0p) {
                        const float2 a = *(const float2 *)(h0p + (int64_t)r * p.V + cc);
                        const float2 b = *(const float2 *)(h0p + (int64_t)(r + 8) * p.V + cc);
                        S[mt][4 * j + 0] = a.x;
                        S[mt][4 * j + 1] = a.y;
                        S[mt][4 * j + 2] = b.x;
                        S[mt][4 * j + 3] = b.y;
                    } else {
                        S[mt][4 * j + 0] = S[mt][4 * j + 1] = S[mt][4 * j + 2] = S[mt][4 * j + 3] = 0.f;
                    }
                }
        }
#if T8_NPW
        if (outputs && nchunks >= 1) {
            T8_STORE_S(0);
            sgla_bar_arrive(T8_BAR_READY(0), 256); /* S_READY[0] */
        }
#else
        if (outputs) T8_STORE_S(0); /* chunk 0 reads it after the loop's first barrier */
#endif
        /* K^T fragments: ldmatrix.trans of core matrices (keys 16 kk + 8 (j >> 1) .. + 7) x
         * (features 64 mt + 16 wl + 8 (j & 1) .. + 7), j = lane / 8; registers 0, 1 hold keys
         * 2 tig, 2 tig + 1 and 2, 3 keys 2 tig + 8, + 9 */
        const int kmj = lane >> 3, k_key = (kmj >> 1) * 8 + (lane & 7), k_f = 16 * wl + (kmj & 1) * 8;
#if T8_TMA
        const uint32_t k_off = (uint32_t)(k_key * 128 + (((k_f >> 3) ^ (lane & 7)) << 4));
#define T8_KOFF(kk, mt) ((kk) * 2048 + (mt) * 8192) /* keys + 16 kk; features + 64 mt = the next box */
#else
        const uint32_t k_off = (uint32_t)(((k_key >> 3) * (T8_KD / 8) + (k_f >> 3)) * 128 + (k_key & 7) * 16);
#define T8_KOFF(kk, mt) (((kk) * 2 * (T8_KD / 8) + (mt) * 8) * 128) /* 2 core-matrix rows; 8 core matrices */
#endif
        float ldsum = 0.f; /* total log2 decay of this block's tokens (mode 1) */
        int s = 0;         /* stage of chunk c */
        for (int c = 0; c < nchunks; c++) {
            T8_CHUNK_TOP();
            ldsum += bC;
            /* S = exp2(b_last) S + (K exp2(b_last - b))^T V */
            if (p.gmode) {
                const float d = sgla_exp2(bC);
#pragma unroll
                for (int mt = 0; mt < T8_MT; mt++)
#pragma unroll
                    for (int e = 0; e < T8_NR; e++) S[mt][e] *= d;
            }
            uint32_t kf[T8_MT][4][4];
#pragma unroll
            for (int kk = 0; kk < 4; kk++) {
                uint32_t w01 = 0, w89 = 0;
                if (p.gmode) {
                    const int ta = 16 * kk + 2 * tig;
                    w01 = T8_PACK(sgla_exp2(bC - bw[ta]), sgla_exp2(bC - bw[ta + 1]));
                    w89 = T8_PACK(sgla_exp2(bC - bw[ta + 8]), sgla_exp2(bC - bw[ta + 9]));
                }
#pragma unroll
                for (int mt = 0; mt < T8_MT; mt++) {
                    uint32_t *ka = kf[mt][kk];
                    sgla_ldm_x4_t(ka, ks + k_off + T8_KOFF(kk, mt));
                    if (p.gmode) {
                        ka[0] = T8_MUL2(ka[0], w01);
                        ka[1] = T8_MUL2(ka[1], w01);
                        ka[2] = T8_MUL2(ka[2], w89);
                        ka[3] = T8_MUL2(ka[3], w89);
                    }
                }
            }
            sgla_wg_fence();
#pragma unroll
            for (int mt = 0; mt < T8_MT; mt++)
#pragma unroll
                for (int kk = 0; kk < 4; kk++) T8_RS_T1(S[mt], kf[mt][kk], dV + T8_VK(kk));
            sgla_wg_commit();
            SGLA_WG_WAIT(0);
#pragma unroll
            for (int mt = 0; mt < T8_MT; mt++)
#pragma unroll
                for (int e = 0; e < T8_NR; e++) SGLA_REG_PIN_F(S[mt][e]);
#pragma unroll
            for (int mt = 0; mt < T8_MT; mt++)
#pragma unroll
                for (int kk = 0; kk < 4; kk++)
#pragma unroll
                    for (int e = 0; e < 4; e++) SGLA_REG_PIN_R(kf[mt][kk][e]);
            T8_RELEASE_STAGE();
#if T8_NPW
            /* S_{c+1} for the output warpgroup's chunk c + 1, once the Q.S of chunk c + 1 - NSB has read that buffer */
            if (outputs && c + 1 < nchunks) {
                sgla_bar_sync(T8_BAR_FREE(T8_SB(c + 1)), 256);
                T8_STORE_S(T8_SB(c + 1));
                sgla_bar_arrive(T8_BAR_READY(T8_SB(c + 1)), 256);
            }
#else
            /* S_{c+1} for WG 0's next chunk; that buffer's last reader was WG 0 in chunk c - 1 */
            if (outputs) T8_STORE_S((c + 1) & 1);
#endif
            s = s + 1 == T8_ST ? 0 : s + 1;
        }
        float *htp = p.mode == 1 ? p.seg_buf + (seg * p.N * p.H + nh) * T8_KD * p.V + v0
                   : (p.nseg > 1 && seg != p.nseg - 1) ? (float *)0
                   : p.ht ? p.ht + nh * T8_KD * p.V + v0 : (float *)0;
        if (p.mode == 1 && blockIdx.y == 0 && tid == 128 * T8_NO) p.seg_ld[seg * p.N * p.H + nh] = ldsum;
        if (htp) {
#pragma unroll
            for (int mt = 0; mt < T8_MT; mt++)
#pragma unroll
                for (int j = 0; j < T8_BV / 8; j++) {
                    const int r = 64 * mt + 16 * wl + gid, cc = 8 * j + 2 * tig;
                    *(float2 *)(htp + (int64_t)r * p.V + cc) = make_float2(S[mt][4 * j + 0], S[mt][4 * j + 1]);
                    *(float2 *)(htp + (int64_t)(r + 8) * p.V + cc) = make_float2(S[mt][4 * j + 2], S[mt][4 * j + 3]);
                }
        }
    }
#if !T8_NPW
    SGLA_CP_WAIT(0);
#endif
}

#undef T8_CHUNK_TOP
#undef T8_STAGE_O
#undef T8_COPY_O
#undef T8_PTRS_IN
#undef T8_PTRS_OUT
#undef T8_BAR_READY
#undef T8_BAR_FREE
#undef T8_BAR_O
#undef T8_NEXT_OUT_S
#undef T8_NO
#undef T8_NSB
#undef T8_SB
#undef T8_NCW
#undef T8_REG_O
#undef T8_REG_S
#undef T8_DESC_A
#undef T8_DESC_V
#undef T8_AK
#undef T8_VK
#undef T8_OADDR
#undef T8_KOFF
#undef T8_TMA
#undef T8_OST
#undef T8_CHUNK_WAIT
#if !T8_NPW
#undef T8_LOAD_CHUNK
#endif
#undef T8_RELEASE_STAGE
#undef T8_STORE_S
#undef T8_PACK
#undef T8_MUL2
#undef T8_SS_QK
#undef T8_SS_T1
#undef T8_RS_T1
#undef T8_NT
#undef T8_NP
#undef T8_NPW
#undef T8_REG_P
#undef T8_REG_C
#undef T8_MT
#undef T8_NR
#undef T8_QBYTES
#undef T8_VBYTES
#undef T8_STAGE_BYTES
#undef T8_SBYTES
#undef T8_QK_IT
#undef T8_QK_RS
#undef T8_V_IT
#undef T8_V_RS
#undef T8_O_UNITS
#undef T8_O_RS
#undef T8_NAME
#undef T8_KD
#undef T8_BV
#undef T8_BF16
#undef T8_ST
#undef T8_MINB
