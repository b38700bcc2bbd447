#!/bin/bash
# Session 35 call 3: gate g by TMA at K = 64 alone, the ring two slots deeper than the stages, each tile
# scanned right after its stage is issued (call 1's order); the producer at 56 registers.
# Carry [".devbin", ".devbinM"] (.devbinM: main e121813, sgla alone).
# the suites, then bench/ab.sh (A = main, B = the change) on these rows:
SGLA_CASES="4,8192,32,64,64:g 4,8192,32,64,64:gamma \
8,4096,16,64,64:g 8,4096,16,64,64:gamma 64,1024,16,64,64:g 64,1024,16,64,64:gamma 2,16384,8,256,256:g \
1,65536,16,64,64:g 1,65536,16,64,64:gamma 1,65536,16,64,64:g:--varlen=64 1,65536,16,64,64:gamma:--varlen=64 \
8,4096,16,128,128:g" \
  . bench/calls/tests_then_ab.sh
