#!/bin/sh
# Build the CUDA backend here and stage what the device needs in .devbin/
# (ignored; carried by the device call).  Builds from a snapshot of HEAD plus
# the CUDA backend's working files, so others' unfinished edits cannot break it.
set -e
cd "$(dirname "$0")/.."
ROOT=$PWD
SNAP=${SNAP:-/tmp/sgla_snap}
rm -rf "$SNAP" && mkdir -p "$SNAP"
git archive HEAD | tar -x -C "$SNAP"
for f in src/cuda/* tools/bench_cuda.c tools/verify_cuda.c tests/test_gpu_*.c tests/gpu_sanitize.cmake tests/CMakeLists.txt; do
  [ -f "$f" ] && mkdir -p "$SNAP/$(dirname "$f")" && cp "$f" "$SNAP/$f"
done
cmake -S "$SNAP" -B "$ROOT/build-cuda" -DCMAKE_BUILD_TYPE=Release > /tmp/sgla_cmake.log
cmake --build "$ROOT/build-cuda" -j16 2>&1 | grep -E "error|ptxas info.*Used|spill|C75[0-9][0-9]" | grep -v " 0 bytes spill" || true
rm -rf .devbin && mkdir -p .devbin/tests
cp -L build-cuda/sgla build-cuda/libsgla.so .devbin/
cp build-cuda/tests/test_gpu_* .devbin/tests/
mkdir -p .devbin/lib && cp -L /lib/x86_64-linux-gnu/libgomp.so.1 .devbin/lib/ 2>/dev/null || true
du -sh .devbin
