#!/bin/bash
# Session 35 call 2: gate g by TMA, the ring a slot a stage (each tile issued a pipeline ahead, before its
# stage's tiles), the K = 64 producer at 56 registers.  Carry [".devbin", ".devbinM"] (.devbinM: main
# e121813, sgla alone).
# the suites, then bench/ab.sh (A = main, B = the change) on these rows:
SGLA_CASES="4,8192,32,64,64:g 4,8192,32,64,64:gamma \
8,4096,16,64,64:g 64,1024,16,64,64:g 2,16384,8,256,256:g 2,16384,8,256,256:gamma 16,4096,8,256,256:g \
1,65536,16,64,64:g 1,65536,16,64,64:gamma 1,65536,16,64,64:g:--varlen=64 1,65536,8,256,256:g:--varlen=64 \
8,4096,16,128,128:g" \
  . bench/calls/tests_then_ab.sh
