"""The library search in a checkout: build/ first, then the other build trees, the most recently built
first, trees built with sanitizers left out (ctypes cannot load them: the process ends)."""
import os

from sgla import _lib


def _tree(root, name, t, sanitize=None):
    d = root / name
    d.mkdir()
    p = d / "libsgla.so"
    p.write_bytes(b"")
    os.utime(p, (t, t))
    if sanitize is not None:
        (d / "CMakeCache.txt").write_text(f"CMAKE_BUILD_TYPE:STRING=Debug\nSGLA_SANITIZE:BOOL={sanitize}\n")
    return str(p)


def test_newest_first(tmp_path):
    a = _tree(tmp_path, "a", 1_000_000)
    b = _tree(tmp_path, "b", 3_000_000)
    c = _tree(tmp_path, "c", 2_000_000)
    assert _lib._newest_first([a, b, c, str(tmp_path / "gone" / "libsgla.so")]) == [b, c, a]
    for p in (a, b, c):  # equal times keep the order given
        os.utime(p, (5_000_000, 5_000_000))
    assert _lib._newest_first([a, b, c]) == [a, b, c]


def test_build_tree_order(tmp_path):
    build = _tree(tmp_path, "build", 1_000_000, sanitize="OFF")
    _tree(tmp_path, "build-asan", 9_000_000, sanitize="ON")  # the newest, but not loadable
    cpu = _tree(tmp_path, "build-cpu", 3_000_000)
    cuda = _tree(tmp_path, "build-cuda", 4_000_000)
    (tmp_path / "build-empty").mkdir()
    assert _lib._build_tree_order(str(tmp_path), ["libsgla.so"]) == [build, cuda, cpu]
    os.remove(build)  # without build/: the newest
    assert _lib._build_tree_order(str(tmp_path), ["libsgla.so"]) == [cuda, cpu]
