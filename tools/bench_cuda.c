/* Placeholder until the CUDA bench lands. */
#include <stdio.h>
#include "bench.h"
int bench_cuda_run(const bench_args *a)
{
    (void)a;
    fprintf(stderr, "sgla bench: the CUDA bench is not implemented yet\n");
    return 2;
}
