# Sourced by the device calls that run fla beside sgla: a staged build's library (BD, default .devbin),
# fla's wheels from .whl installed under /tmp/site, Triton's cache in /tmp/triton_cache filled from a
# carried .triton_cache/cache.tgz (fewer cold compiles), OUT made.  Sets PYTHONPATH, SGLA_LIBRARY and,
# where the build needs it, LD_LIBRARY_PATH.
OUT=${OUT:-/tmp/sgla_out}
mkdir -p "$OUT"
BD=${BD:-.devbin}
for z in $BD/*.xz; do [ -f "$z" ] && unxz -f "$z"; done
if ldd $BD/libsgla.so 2>/dev/null | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/$BD/lib:${LD_LIBRARY_PATH:-}; fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
export TRITON_CACHE_DIR=/tmp/triton_cache PYTHONUNBUFFERED=1 SGLA_LIBRARY=$PWD/$BD/libsgla.so
mkdir -p $TRITON_CACHE_DIR
[ -f .triton_cache/cache.tgz ] && tar xzf .triton_cache/cache.tgz -C $TRITON_CACHE_DIR 2>/dev/null
