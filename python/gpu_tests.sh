#!/usr/bin/env bash
# The gpu-marked Python tests (torch CUDA tensors vs the fp64 recurrence and
# vs flash-linear-attention), in two steps:
#
#   here:    python/gpu_tests.sh stage
#            builds libsgla with CUDA from a snapshot of HEAD (others' unfinished
#            edits cannot break it) into python/build/devlib/ (ignored by git)
#   device:  run  command: bash python/gpu_tests.sh run [pytest args]
#                 carry:   ["python/build/devlib", ".whl"]
#            installs fla from .whl/*.whl into /tmp/site when present (no
#            network there), then pytest -m gpu with SGLA_LIBRARY set.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
lib="$root/python/build/devlib/libsgla.so"
case "${1:-}" in
stage)
    snap=$(mktemp -d /tmp/sgla_py_snap.XXXXXX)
    git archive HEAD | tar -x -C "$snap"
    cmake -S "$snap" -B "$snap/b" -DCMAKE_BUILD_TYPE=Release -DSGLA_BUILD_TESTS=OFF -DSGLA_ENABLE_CUDA=ON >"$snap/configure.log" 2>&1 \
        || { tail -30 "$snap/configure.log" >&2; exit 1; }
    grep -q "sgla: CUDA backend ON" "$snap/configure.log" || { echo "no CUDA compiler found: the library would be CPU-only" >&2; exit 1; }
    if ! cmake --build "$snap/b" --target sgla_shared -j"$(nproc 2>/dev/null || echo 2)" >"$snap/build.log" 2>&1; then
        tail -30 "$snap/build.log" >&2; exit 1
    fi
    mkdir -p "$(dirname "$lib")"
    cp -L "$snap/b/libsgla.so" "$lib"
    rm -rf "$snap"
    echo "staged $lib ($(git rev-parse --short HEAD))"
    ;;
run)
    shift
    [ -f "$lib" ] || { echo "no $lib: run 'python/gpu_tests.sh stage' first and carry python/build/devlib" >&2; exit 2; }
    if ls .whl/*.whl >/dev/null 2>&1; then
        python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .whl/*.whl
        export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
    fi
    export PYTHONPATH="$root/python:${PYTHONPATH:-}"
    SGLA_LIBRARY="$lib" exec python3 -m pytest -p no:cacheprovider python/tests -m gpu -v -rs --durations=5 "$@"
    ;;
*)
    echo "usage: python/gpu_tests.sh stage | run [pytest args]" >&2; exit 2 ;;
esac
