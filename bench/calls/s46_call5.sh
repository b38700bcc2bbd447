#!/bin/bash
# Session 46 call 5: s45_call8.sh's per-instruction profile (ncu SourceCounters of one grads launch and
# one reverse states launch, 8x4096x16x128 fp32, gate g) of main's kernels after this session
# (.devbinN, the cubin of main's chunk_bwd.cu), for the next session's plan.  Carry [".devbinN"].
sed 's/\.devbinU/.devbinN/g' bench/calls/s45_call8.sh | bash
