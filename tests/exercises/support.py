"""Helpers for the grading tests, which run against a workspace's minitorch: nothing here imports
minitorch at import time; each helper binds to whichever minitorch is imported when it is called.

* ``fake_gpu()``: ``minitorch/cuda/array.py`` imported against tests/fake_cuda.py, whose "device
  memory" is host RAM, so the memory layer of phase 01 is graded on any machine.
* ``function_from(file, name)``: one pure function of a module that cannot be imported without a
  GPU (``native/cuda/launch.py``), compiled on its own.
* ``close(got, want, what)``: an AssertionError saying what differs, in one sentence.
"""
import ast
import importlib.util
import sys
from contextlib import contextmanager
from pathlib import Path

FAKE_CUDA = Path(__file__).resolve().parents[1] / "fake_cuda.py"


def _fake_cuda_module():
    spec = importlib.util.spec_from_file_location("_fake_cuda_for_grading", FAKE_CUDA)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def fake_gpu():
    """Inside the block ``minitorch.cuda`` believes a GPU is there (host RAM behind it); modules
    imported inside (``minitorch.cuda.array``...) are fresh copies bound to it, forgotten after."""
    import minitorch.cuda
    from minitorch.cuda import memory
    fake = _fake_cuda_module().FakeCuda()
    bound = ("minitorch.cuda.array", "minitorch.native.cuda")
    mine = lambda name: name.startswith(bound)
    saved_modules = {k: v for k, v in sys.modules.items() if mine(k)}
    for k in saved_modules:
        del sys.modules[k]
    saved = minitorch.cuda.cupy_or_raise, memory._pools, getattr(minitorch.cuda, "array", None)
    minitorch.cuda.cupy_or_raise, memory._pools = (lambda: fake), {}
    try:
        yield fake
    finally:
        minitorch.cuda.cupy_or_raise, memory._pools = saved[:2]
        if saved[2] is None:                    # `from minitorch.cuda import array` reads this
            minitorch.cuda.__dict__.pop("array", None)
        else:
            minitorch.cuda.array = saved[2]
        for k in [k for k in sys.modules if mine(k)]:
            del sys.modules[k]
        sys.modules.update(saved_modules)


def function_from(file, name, namespace=None):
    """The function ``name`` of ``minitorch/<file>`` (the imported minitorch's), compiled alone,
    without its decorators, with ``namespace`` as its globals."""
    import minitorch
    path = Path(minitorch.__file__).resolve().parent / file
    tree = ast.parse(path.read_text())
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    node.decorator_list = []
    env = dict(namespace or {})
    exec(compile(ast.Module(body=[node], type_ignores=[]), str(path), "exec"), env)
    return env[name]


def close(got, want, what, rtol=1e-5, atol=1e-6):
    """Raise AssertionError('<what>: ...') unless ``got`` matches ``want`` (arrays, shapes too)."""
    import numpy as np
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        raise AssertionError(f"{what}: shape {got.shape}, expected {want.shape}")
    if got.size == 0:
        return
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    if bad.any():
        i = tuple(int(j) for j in np.argwhere(bad)[0])
        raise AssertionError(f"{what}: element {i} is {got[i]!r}, expected {want[i]!r} "
                             f"({int(bad.sum())} of {got.size} elements differ)")
