#!/bin/bash
# Session 45 call 7: wip/lat (W: the grads kernel's row loads all in flight before their stores, dg's
# <dS', S> by float4 pairs four in flight) against main's kernels (.devbinU = 8e3a1af, the cubin of
# main's chunk_bwd.cu).  As s45_call5.sh: test_gpu_backward of W, memcheck and racecheck of its small
# set, the backward A/B (two rounds), ncu's kernel times of W.  Carry [".devbinW", ".devbinU"].
NEW=.devbinW BASE=.devbinU exec bash bench/calls/s45_call5.sh
