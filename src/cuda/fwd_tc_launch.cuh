/* Host side of the tensor-core kernels: one config row per instance and the
 * launch (shared-memory size, the opt-in above 48 KB, error checks). */
#ifndef SGLA_FWD_TC_LAUNCH_CUH
#define SGLA_FWD_TC_LAUNCH_CUH

typedef void (*tc_kernel_fn)(const sgla_kparams);
typedef struct tc_cfg {
    int kd, bv, nw, stages, oq;
    tc_kernel_fn bf16, f16;
    const char *name;
} tc_cfg;

/* Must match the layout in fwd_tc_body.cuh. */
static size_t tc_smem_bytes(const tc_cfg *c)
{
    size_t ldq = (size_t)c->kd + 8, ldv = (size_t)c->bv + 8;
    size_t stage = (2 * 64 * ldq + 64 * ldv) * 2;
    return c->stages * stage + c->stages * 64 * 4 + c->kd * ldv * 2 + (c->oq ? 0 : 64 * ldv * 2) + c->nw * 64 * 4;
}

static sgla_status sgla_tc_launch(const tc_cfg *c, const sgla_kparams *p, sgla_dtype dt, cudaStream_t st)
{
    tc_kernel_fn fn = dt == SGLA_BF16 ? c->bf16 : c->f16;
    size_t smem = tc_smem_bytes(c);
    cudaError_t e = cudaFuncSetAttribute((const void *)fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess)
        return sgla_fail(SGLA_ERR_CUDA, "cudaFuncSetAttribute(fwd_%s, %zu bytes smem): %s", c->name, smem,
                         cudaGetErrorString(e));
    dim3 grid((unsigned)(p->N * p->H), (unsigned)(p->V / c->bv));
    fn<<<grid, c->nw * 32, smem, st>>>(*p);
    e = cudaGetLastError();
    if (e != cudaSuccess)
        return sgla_fail(SGLA_ERR_CUDA, "launch of fwd_%s (grid %u x %u, %zu bytes smem): %s", c->name, grid.x,
                         grid.y, smem, cudaGetErrorString(e));
    return SGLA_OK;
}

#endif
