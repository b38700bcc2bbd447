#!/bin/bash
# session 10 call 2 (ad hoc; deleted before the session ends)
OUT=${OUT:-/tmp/o}
bash bench/device_run.sh tests

mkdir -p $OUT/ps $OUT/pool $OUT/wr
SGLA_CASES="8,4096,16,128,128:g 64,1024,16,128,128:g 4,8192,16,128,256:g 4,8192,32,64,64:g 1,65536,16,128,128:g:--varlen=64 8,4096,16,128,128:gamma" OUT=$OUT/ps bash bench/ab.sh > $OUT/ps/sum.txt 2>&1
SGLA_DEVBIN_B=.devbinC SGLA_ITERS=50 SGLA_CASES="256,1,32,128,128:g:--pool 64,1,16,128,128:g:--pool 1,1,16,128,128:g:--pool 256,1,32,64,64:g:--pool 1,8442,32,128,128:g:--pool:--varlen=2048x4,1x250" OUT=$OUT/pool bash bench/ab.sh > $OUT/pool/sum.txt 2>&1
[ -d .devbinD ] && SGLA_DEVBIN_B=.devbinD SGLA_CASES="4,8192,32,64,64:g 8,4096,16,128,128:g 64,1024,16,128,128:g 1,65536,16,128,128:g:--varlen=64" OUT=$OUT/wr bash bench/ab.sh > $OUT/wr/sum.txt 2>&1
echo "== producer-scan (B)"; grep -v "^sgla bench" $OUT/ps/sum.txt
echo "== pool PV=16 (B)"; grep -v "^sgla bench" $OUT/pool/sum.txt
echo "== warp-release (B)"; grep -v "^sgla bench" $OUT/wr/sum.txt 2>/dev/null
