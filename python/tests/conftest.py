import pytest


def _cuda_ok():
    try:
        import torch
    except ImportError:
        return False, "torch is not installed"
    if not torch.cuda.is_available():
        return False, "no CUDA device"
    import sgla
    if "cuda" not in sgla.backends():
        return False, "libsgla was built without the CUDA backend (SGLA_CUDA=1 pip install ./python)"
    return True, ""


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs torch with a CUDA device (skipped otherwise)")


def pytest_report_header(config):
    import sgla
    return [f"sgla {sgla.__version__} from {sgla.library_path}; backends: {', '.join(sgla.backends())}"]


def pytest_collection_modifyitems(config, items):
    ok, why = _cuda_ok()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"gpu test: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
