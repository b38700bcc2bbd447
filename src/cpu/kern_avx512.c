/* placeholder while the SIMD kernels are written: the scalar ones */
#include "cpu_kernels.h"
const sgla_cpu_kernels sgla_cpu_kernels_avx512 = {0};
