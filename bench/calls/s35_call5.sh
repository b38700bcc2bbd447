#!/bin/bash
# Session 35 call 5: gate g by TMA at K = 64 as in call 3 (5e03157's kernels but for the entry check of gb),
# not where the call splits (gate_b's b there, as before), and without b's rows in the workspace.  Carry [".devbin", ".devbinM"] (.devbinM: main e121813, sgla alone).
# the suites, then bench/ab.sh (A = main, B = the change) on these rows:
SGLA_CASES="4,8192,32,64,64:g 8,4096,16,64,64:g \
64,1024,16,64,64:g 1,65536,16,64,64:g 1,65536,16,64,64:g:--varlen=64" \
  . bench/calls/tests_then_ab.sh
