#!/bin/bash
# Session 45 call 9: wip/dgpar (X: the gate gradient's per-row sums by lane scans over all 8 warps; warp 0
# alone had summed r (L - r) terms a lane, ~12 % of the grads kernel's stall samples in call 8) against
# main's kernels (.devbinU = 8e3a1af).  As s45_call7.sh.  Carry [".devbinX", ".devbinU"].
NEW=.devbinX BASE=.devbinU exec bash bench/calls/s45_call5.sh
