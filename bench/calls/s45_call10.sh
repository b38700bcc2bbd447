#!/bin/bash
# Session 45 call 10: wip/cpa (Y: the grads kernel's fp32 rows by cp.async, every copy in flight, warp 0's
# gate loads beside them) against main's kernels (.devbinX = 8b028c8, the cubin of main's chunk_bwd.cu).
# As s45_call9.sh without the ncu part.  Carry [".devbinY", ".devbinX"].
NEW=.devbinY BASE=.devbinX SGLA_NCU=0 exec bash bench/calls/s45_call5.sh
