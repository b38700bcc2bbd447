#!/usr/bin/env bash
# The whole test suite, as the README gives it:
#   1. the normal build (CUDA kernels compiled when nvcc is present) and every
#      test that needs no GPU (ctest -LE gpu);
#   2. the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. where clang is installed, the CPU build with clang and its tests (the
#      installed static library linked by a gcc consumer: another OpenMP runtime);
#   4. the Python package: pip install ./python and pytest.
# GPU tests (label gpu, pytest -m gpu) run on a machine with a GPU through
# bench/device_run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

echo "== build (release) =="
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs"
echo "== tests (release, no GPU) =="
ctest --test-dir build -LE gpu --output-on-failure -j"$jobs"

echo "== build (ASan + UBSan) =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DSGLA_SANITIZE=ON -DSGLA_ENABLE_CUDA=OFF
cmake --build build-asan -j"$jobs"
echo "== tests (ASan + UBSan) =="
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan -LE gpu --output-on-failure -j"$jobs"

if command -v clang >/dev/null; then
    echo "== build (clang, CPU) and its tests =="
    CC=clang cmake -S . -B build-clang -DCMAKE_BUILD_TYPE=Release -DSGLA_ENABLE_CUDA=OFF
    cmake --build build-clang -j"$jobs"
    ctest --test-dir build-clang -LE gpu --output-on-failure -j"$jobs"
fi

if [ -x python/run_tests.sh ]; then
    echo "== Python package =="
    python/run_tests.sh
fi
echo "== all suites passed =="
