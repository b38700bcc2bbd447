#!/bin/bash
# Session 37 call 4: wip/dg3 (be08915: dg3_kernel issues every load of its chunk before the first sum; a
# one-part instance where both passes have one column block) staged in .devbin; .devbinA = main's kernels
# (a5115c5 = fe0edeb), sgla alone.  Its suites, then bench/ab.sh A = main, B = wip/dg3 on backward rows
# (one part: K = 64, 128; four parts: K = 256).  Carry [".devbin", ".devbinA"].
nvidia-smi --query-gpu=name --format=csv,noheader
SGLA_CASES="4,8192,32,64,64:g:--backward 4,8192,32,64,64:gamma:--backward 8,4096,16,128,128:g:--backward \
64,1024,16,128,128:g:--backward 2,16384,8,256,256:g:--backward" SGLA_DEVBIN_A=.devbinA . bench/calls/tests_then_ab.sh
