#!/bin/bash
# Session 46 call 6 (never ran: the device did not start): s46_call7.sh with two rounds of five cases and
# ncu's kernel times of C.  Carry [".devbinN", ".devbinB", ".devbinC"].
SGLA_ROUNDS=2 SGLA_NCU=1 \
  SGLA_CASES="8,4096,16,128,128:f32:g 8,4096,16,128,128:f32t:g 8,4096,16,128,128:f32:gamma 4,8192,32,64,64:f32:g 2,4096,8,256,256:f32:g" \
  exec bash bench/calls/s46_call7.sh
