#!/bin/sh
# Build the CUDA backend here and stage what the device needs in .devbin/
# (ignored; carried by the device call).  Builds a snapshot of the working
# tree (tracked and new files), so the build matches what travels.
#   SGLA_STAGE_HISTORY=1 also builds the tag cuda-history = 2ae8137 (the kernel versions
#   before the one-family rewrite) into .devbin/history/ for side-by-side timing.
set -e
cd "$(dirname "$0")/.."
ROOT=$PWD
DB=${SGLA_DEVBIN:-.devbin}   # another folder stages a second build beside the first (e.g. the 80-virtual one)
SNAP=${SNAP:-/tmp/sgla_snap${SGLA_DEVBIN:+-$(basename "$DB")}}   # one a staged folder: two stages may run at once
# The snapshot is updated in place, a changed file copied with the time of the copy, so that make
# rebuilds what it touches: with the working tree's own mtimes, a file edited while an earlier stage
# compiled from the older snapshot was older than that compile's objects, which were kept (session 20).
NEW=$SNAP.new
rm -rf "$NEW" && mkdir -p "$NEW" "$SNAP"
if [ -n "${SGLA_STAGE_REV:-}" ]; then # a committed revision (a branch to time beside this tree)
  git archive "$SGLA_STAGE_REV" | tar -x -C "$NEW"
else
  git ls-files -co --exclude-standard -z | xargs -0 tar -cf - | tar -x -C "$NEW"
fi
# (files gone first, so that a path which became a folder can be made; a changed file is written anew,
# taking the new one's mode)
(cd "$SNAP" && find . -type f) | while IFS= read -r f; do [ -f "$NEW/$f" ] || rm -f "$SNAP/$f"; done
(cd "$NEW" && find . -type f) | while IFS= read -r f; do
  cmp -s "$NEW/$f" "$SNAP/$f" || { mkdir -p "$SNAP/${f%/*}" && rm -f "$SNAP/$f" && cp "$NEW/$f" "$SNAP/$f"; }
done
rm -rf "$NEW"
# SGLA_STAGE_REV: build that committed revision (e.g. a branch) instead of the working tree.
# SGLA_CMAKE_ARGS: more cmake arguments (e.g. -DCMAKE_CUDA_FLAGS=-DSGLA_POOL_PT=256 for a variant build).
# the lent H200 needs sm_90a alone (a smaller upload); SGLA_CUDA_ARCHS=80-virtual stages a build whose only
# kernels are sm_80 PTX, JIT-compiled there: the path of GPUs before Hopper, run on the H200
BUILD=$ROOT/build-cuda${SGLA_DEVBIN:+-$(basename "$DB")}
cmake -S "$SNAP" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DSGLA_PTXAS_VERBOSE=ON \
  -DCMAKE_CUDA_ARCHITECTURES="${SGLA_CUDA_ARCHS:-90a-real}" ${SGLA_CMAKE_ARGS:-} > /tmp/sgla_cmake.log
cmake --build "$BUILD" -j"$(nproc)" 2>&1 | grep -E "error|ptxas info.*Used|spill|C75[0-9][0-9]" | grep -v " 0 bytes spill" || true
rm -rf "$DB" && mkdir -p "$DB/tests" "$DB/lib"
cp -L "$BUILD/sgla" "$BUILD/libsgla.so" "$DB/"
cp "$BUILD/tests/test_gpu_forward" "$BUILD/tests/test_gpu_backward" "$BUILD/tests/test_gpu_pool" "$DB/tests/"
cp -L /lib/x86_64-linux-gnu/libgomp.so.1 "$DB/lib/" 2>/dev/null || true
if [ "${SGLA_STAGE_HISTORY:-0}" = 1 ]; then
  H=/tmp/sgla_history
  rm -rf "$H" && mkdir -p "$H/src"
  # the tag where the checkout has it, else its commit (tags did not travel with every clone)
  git archive "$(git rev-parse -q --verify cuda-history || echo 2ae8137)" | tar -x -C "$H/src"
  cmake -S "$H/src" -B "$H/build" -DCMAKE_BUILD_TYPE=Release > /tmp/sgla_cmake_history.log
  cmake --build "$H/build" -j"$(nproc)" --target sgla_cli > /dev/null 2>&1
  mkdir -p "$DB/history" && cp -L "$H/build/sgla" "$DB/history/"
fi
if [ -n "${SGLA_STAGE_REV:-}" ]; then
  echo "$(git rev-parse --short "$SGLA_STAGE_REV") ($SGLA_STAGE_REV)" > "$DB/COMMIT"
else
  git rev-parse --short HEAD > "$DB/COMMIT"; git diff --quiet HEAD || echo "+ uncommitted changes" >> "$DB/COMMIT"
fi
echo "archs ${SGLA_CUDA_ARCHS:-90a-real} ${SGLA_CMAKE_ARGS:-}" >> "$DB/COMMIT"
# each binary carries the library's kernels (30 MB): xz makes them 7 MB (gzip 11), so a full
# build and two more CLIs stay under the device call's 64 MiB; device_run.sh and ab.sh unpack them
# (and keep the execute bit)
xz -9 -T"$(nproc)" "$DB"/tests/* "$DB/sgla" "$DB/libsgla.so"
du -sh "$DB"
