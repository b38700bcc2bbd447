"""The library search: a checkout's build trees, the most recently built first."""
import os

from sgla import _lib


def test_newest_build_first(tmp_path):
    paths = []
    for i, name in enumerate(("build", "build-cpu", "build-cuda")):
        d = tmp_path / name
        d.mkdir()
        p = d / "libsgla.so"
        p.write_bytes(b"")
        paths.append(str(p))
    os.utime(paths[0], (1_000_000, 1_000_000))
    os.utime(paths[1], (3_000_000, 3_000_000))  # the newest
    os.utime(paths[2], (2_000_000, 2_000_000))
    missing = str(tmp_path / "build-asan" / "libsgla.so")
    assert _lib._newest_first(paths + [missing]) == [paths[1], paths[2], paths[0]]
    # equal times keep the order given (the names' order)
    for p in paths:
        os.utime(p, (5_000_000, 5_000_000))
    assert _lib._newest_first(paths) == paths
