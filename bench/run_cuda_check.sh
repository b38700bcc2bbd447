#!/bin/bash
# `sgla run --backend cuda` end to end on the device (and `sgla grad`, below): .npy inputs made by numpy
# (fp16 q/k/v, a data-dependent gate, h0, a partial last chunk, K != V), the CUDA
# result against `sgla run --backend ref-a` (fp64), relative L2 of o and ht printed.
#   run: bash bench/run_cuda_check.sh [sgla binary]     (needs python3 with numpy)
set -eu
SGLA=${1:-.devbin/sgla}
D=$(mktemp -d)
python3 - "$D" <<'PY'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(20261129)
B, T, H, K, V = 2, 300, 4, 128, 64
np.save(f"{d}/q.npy", (rng.standard_normal((B, T, H, K)) * 0.5).astype(np.float16))
np.save(f"{d}/k.npy", (rng.standard_normal((B, T, H, K)) * 0.5).astype(np.float16))
np.save(f"{d}/v.npy", rng.standard_normal((B, T, H, V)).astype(np.float16))
np.save(f"{d}/g.npy", -rng.uniform(0.0, 0.2, (B, T, H)).astype(np.float32))
np.save(f"{d}/h0.npy", rng.standard_normal((B, H, K, V)).astype(np.float32))
print(f"inputs: B={B} T={T} H={H} K={K} V={V}, fp16, gate g ~ -U(0, 0.2), h0")
PY
for be in cuda ref-a; do
  rc=0
  "$SGLA" run --q $D/q.npy --k $D/k.npy --v $D/v.npy --g $D/g.npy --h0 $D/h0.npy --scale 0.088388 \
    --backend $be --o $D/o_$be.npy --ht $D/ht_$be.npy || rc=$?
  echo "sgla run --backend $be: rc=$rc"
  [ $rc = 0 ] || exit 1
done
# `sgla bench --backend cuda` without --dtype times bf16, the dtype users run on the GPU
row=$("$SGLA" bench --backend cuda --shape 1,256,1,64,64 --iters 3 --format csv 2>/dev/null | grep "^cuda," | head -1)
echo "sgla bench --backend cuda (no --dtype): $row"
case "$row" in *,bf16,*) ;; *) echo "run_cuda_check: FAIL (the CUDA bench's default dtype is not bf16)"; exit 1 ;; esac
# a shape the CUDA backend refuses is named before the bench allocates for it (70000^2 x 2 bytes would be 9.8 GB)
rc=0; msg=$("$SGLA" bench --backend cuda --shape 1,1,1,70000,70000 --iters 1 2>&1) || rc=$?
echo "sgla bench --backend cuda --shape 1,1,1,70000,70000: rc=$rc: $(echo "$msg" | head -1)"
case "$rc:$msg" in 1:*"shape 1,1,1,70000,70000: "*) ;; *) echo "run_cuda_check: FAIL (the refused shape)"; exit 1 ;; esac
# sgla grad on CUDA (fp16 with dg: the mma.sync backward; without dg: the three passes on Hopper) against
# ref-a, and --check-finite's refusal of a NaN in do before any CUDA call
python3 - "$D" <<'PY'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(20261205)
do = rng.standard_normal((2, 300, 4, 64)).astype(np.float16)
np.save(f"{d}/do.npy", do)
np.save(f"{d}/dht.npy", rng.standard_normal((2, 4, 128, 64)).astype(np.float32))
do[1, 17, 2, 5] = np.nan
np.save(f"{d}/do_nan.npy", do)
PY
G0="--q $D/q.npy --k $D/k.npy --v $D/v.npy --h0 $D/h0.npy --scale 0.088388 --dht $D/dht.npy"
G="$G0 --do $D/do.npy"
for be in cuda ref-a; do
  rc=0
  "$SGLA" grad $G --g $D/g.npy --backend $be --dq $D/dq_$be.npy --dk $D/dk_$be.npy --dv $D/dv_$be.npy \
    --dg $D/dg_$be.npy --dh0 $D/dh0_$be.npy || rc=$?
  echo "sgla grad --g --dg --backend $be: rc=$rc"
  [ $rc = 0 ] || exit 1
done
rc=0
"$SGLA" grad $G --backend cuda --dq $D/dq3.npy --dk $D/dk3.npy --dv $D/dv3.npy || rc=$?
echo "sgla grad (no gate) --backend cuda: rc=$rc"; [ $rc = 0 ] || exit 1
"$SGLA" grad $G --backend ref-a --dq $D/dq3r.npy --dk $D/dk3r.npy --dv $D/dv3r.npy
rc=0; msg=$("$SGLA" grad $G0 --do $D/do_nan.npy --g $D/g.npy --backend cuda --check-finite \
  --dq $D/x1.npy --dk $D/x2.npy --dv $D/x3.npy 2>&1) || rc=$?
echo "sgla grad --check-finite, a NaN in do, --backend cuda: rc=$rc: $(echo "$msg" | head -1)"
case "$rc:$msg" in 1:*"NaN or infinity"*) ;; *) echo "run_cuda_check: FAIL (the NaN in do)"; exit 1 ;; esac
[ ! -e $D/x1.npy ] || { echo "run_cuda_check: FAIL (an output written after a refusal)"; exit 1; }
python3 - "$D" <<'PY'
import sys, numpy as np
d = sys.argv[1]
ok = True
# (result, fp64 reference, bar): the forward's o and ht, then sgla grad's gradients (with dg: the
# mma.sync backward; without a gate: the three passes)
pairs = [(f"{n}_cuda", f"{n}_ref-a", 1e-3) for n in ("o", "ht")] + \
    [(f"{n}_cuda", f"{n}_ref-a", 5e-3) for n in ("dq", "dk", "dv", "dg", "dh0")] + \
    [(f"{n}3", f"{n}3r", 5e-3) for n in ("dq", "dk", "dv")]
for name, ref, thr in pairs:
    a = np.load(f"{d}/{name}.npy").astype(np.float64); r = np.load(f"{d}/{ref}.npy").astype(np.float64)
    rel = np.linalg.norm(a - r) / np.linalg.norm(r)
    good = np.isfinite(a).all() and rel <= thr
    ok &= bool(good)
    print(f"{name}: shape {a.shape} rel L2 {rel:.3e} max abs {np.abs(a - r).max():.3e} -> {'ok' if good else 'FAIL'} (<= {thr:g})")
print("run_cuda_check:", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
