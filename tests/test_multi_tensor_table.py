"""The multi-tensor table (minitorch/native/cuda/multi_tensor.py) when gradients move.

A training step's gradients are allocated anew each step and often land at other addresses, so
the table is cached by the parameters' addresses and its gradient address words are rewritten in
place. These tests run on tests/fake_cuda.FakeGPU (its "device memory" is host memory, so the
table's words can be read back) in a process of their own: the fake must be in place before the
cuda backend is imported.
"""
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent('''
    import sys
    sys.path[:0] = [{root!r}, {tests!r}]
    import fake_cuda
    fake = fake_cuda.install_gpu()
    import numpy as np
    from minitorch.cuda import array
    from minitorch.native.cuda import multi_tensor as mt

    f32 = np.dtype(np.float32)
    sizes = (5000, 3, 9000, 4096)
    params = [array.empty((n,), f32, 0) for n in sizes]
    bufs = [array.empty((n,), f32, 0) for n in sizes]
    held, tables = [], []
    for step in range(6):
        held.append(array.empty((100 * (step + 1),), f32, 0))          # moves the next gradients
        grads = [array.empty((n,), f32, 0) for n in sizes]
        table, nchunks = mt._table((params, grads, bufs), 0)
        tables.append(table)
        fresh = mt._new_table([[a.ptr for a in lst] for lst in (params, grads, bufs)], sizes, 0)
        assert nchunks == fresh.nchunks == 2 + 1 + 3 + 1, nchunks
        words = array.to_numpy(table)
        assert np.array_equal(words, fresh.host), (step, words, fresh.host)   # the same words as a new table
        assert list(words[4:8].view(np.uint64)) == [g.ptr for g in grads], step
        none_role = mt._table((params, grads, None), 0)[0]              # an absent role: its own table, zeros
        assert not array.to_numpy(none_role)[8:12].any()
        del grads
    assert all(t is tables[0] for t in tables), "the parameters did not move: one table, rewritten"
    other = [array.empty((n,), f32, 0) for n in sizes]                 # other parameters: another table
    assert mt._table((other, other, bufs), 0)[0] is not tables[0]
    fake.stream = 7                                                     # another stream: another table
    assert mt._table((params, params, bufs), 0)[0] is not tables[0]
    print("ok")
''')


def test_table_rewrites_the_gradient_addresses_it_caches():
    script = SCRIPT.format(root=str(ROOT), tests=str(ROOT / "tests"))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr
