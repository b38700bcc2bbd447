"""The Python examples in examples/ run as they are (each asserts its own
results and prints "ok")."""
import os
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def run(name, *argv):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(EXAMPLES, "..", "python"), env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *argv], env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith("ok"), r.stdout
    return r.stdout


def test_numpy_quickstart():
    out = run("numpy_quickstart.py")
    assert "rel L2" in out


def test_torch_layer():
    pytest.importorskip("torch")
    out = run("torch_layer.py")
    assert "loss" in out and "gradcheck (float64, reference backend): True" in out


def test_serving_loop():
    out = run("serving_loop.py", "--requests", "16", "--seed", "3")
    assert "16 requests on cpu, every output checked against a run alone" in out and "tokens/s" in out


@pytest.mark.gpu
def test_serving_loop_cuda():
    """the same engine loop with the pool on the GPU and bf16 q, k, v"""
    pytest.importorskip("torch")
    out = run("serving_loop.py", "--requests", "24", "--seed", "4", "--device", "cuda")
    assert "24 requests on cuda, every output checked against a run alone" in out
