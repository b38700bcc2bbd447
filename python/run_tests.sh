#!/usr/bin/env bash
# The Python package's tests: build and install the package (pip install ./python,
# which runs the repository's CMake; CUDA off unless SGLA_CUDA=1), then pytest.
#
#   python/run_tests.sh [pytest args...]
#
# By default a virtual environment in build/python-venv (created once, reused);
# SGLA_PY_NO_VENV=1 uses the current python instead.  PYTHON picks the
# interpreter (default python3).  Tests marked gpu skip themselves without
# torch + CUDA.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
py=${PYTHON:-python3}

if [ "${SGLA_PY_NO_VENV:-0}" != 1 ]; then
    venv="$root/build/python-venv"
    if [ ! -x "$venv/bin/python" ]; then
        mkdir -p "$root/build"
        if ! "$py" -m venv "$venv" 2>/dev/null; then
            # Debian's python3 ships venv separately.
            rm -rf "$venv"
            if command -v apt-get >/dev/null; then
                apt-get update -q && apt-get install -y -q python3-venv python3-pip
            fi
            "$py" -m venv "$venv"
        fi
    fi
    py="$venv/bin/python"
fi

export PIP_DISABLE_PIP_VERSION_CHECK=1
"$py" -m pip install -q numpy pytest ml_dtypes  # ml_dtypes: the bf16 arrays of test_numpy.py
echo "-- pip install ./python (SGLA_CUDA=${SGLA_CUDA:-0})"
"$py" -m pip install -q ./python
# Run from the repository root with the installed package (not the source
# tree's python/sgla, which has no library of its own).
exec "$py" -m pytest -c python/pyproject.toml --rootdir python -p no:cacheprovider python/tests "$@"
