# GENERATED from minitorch/native/cuda/multi_tensor.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 05
"""Multi-tensor apply: one kernel launch updates a whole list of tensors (``minitorch/cuda/multi_tensor.cu``).

An optimizer step touches every parameter of a model; one launch per parameter costs ~5 us of host
time each and leaves the GPU idle between tiny kernels. Here one launch covers a list: block b of
the grid works on chunk b (CHUNK elements of one tensor), found in a table of 64-bit words in
device memory: the tensors' addresses (one list per role: params, grads, each state), their sizes,
and each chunk's (tensor, first element). The table is built on the host with NumPy, uploaded with
one asynchronous host-to-device copy into memory from our allocator, and CACHED by the tuple of
addresses and sizes: in a training loop the parameters, their state and (with our caching
allocator) their gradients keep their addresses, so a steady-state step is one launch and no host
synchronization. Gradients are the exception: ``zero_grad()`` frees them and backward allocates
them anew, and they often land elsewhere (37 distinct gradient address tuples in 40 steps of the seed
CNN on the H100). So a table is cached by everything BUT the later lists' addresses (GPU, stream,
sizes, lists[0]'s addresses: the parameters), and when only those moved, their words are rewritten
in place by one small host-to-device copy, queued on the table's stream after every launch that
read the old ones. New parameter addresses (after ``load_state_dict``, ``module.to()``) give a new table.

The functions mirror native/cpu.py's (same names and arguments). Every list holds DeviceArrays of
one dtype (float32, float64, float16, bfloat16) on one GPU; params and state must be contiguous
(they are written in place); a non-contiguous gradient is copied first (copy kernel).
"""
import struct
from collections import OrderedDict

import numpy as np

from ...cuda import array
from .creation import fill_
from .elementwise import contiguous
from .launch import BLOCK, SUFFIX, cp, kernel, launch

_current_stream = cp.cuda.get_current_stream
_runtime = cp.cuda.runtime

CHUNK = 4096          # elements per block: multi_tensor.cu's CHUNK
_MAX_TABLES = 64      # tables kept (least recently used dropped first): a few optimizers x groups x dtypes
_tables = OrderedDict()
_counters = {}        # GPU -> the uint32 ticket counter of grads_norm's last-block pass (kept at 0 between launches)
_FLOATS = ("f32", "f64", "f16", "bf16")


class _Table:
    """A table in device memory (``table``), the host array it was copied from (``host``: its
    first words are the addresses; ``host_ptr``, where it lies: NumPy's ``.ctypes`` costs a few
    us a call), the addresses it holds now, one list per role, and ``pack_addresses``, which
    writes new ones into ``host`` (a struct of that many uint64: cheaper than a NumPy array)."""

    __slots__ = ("table", "host", "host_ptr", "addresses", "nchunks", "pack_addresses")

    def __init__(self, table, host, addresses, nchunks):
        self.table, self.host, self.host_ptr = table, host, host.ctypes.data
        self.addresses, self.nchunks = addresses, nchunks
        self.pack_addresses = struct.Struct(f"={sum(map(len, addresses))}Q")


def _table(lists, device_id):
    """(table DeviceArray, number of chunks) for ``lists`` (each a list of DeviceArrays, or None for
    an absent role: null addresses), all of lists[0]'s sizes. Cached on GPU, stream, sizes and
    lists[0]'s addresses; the other addresses are rewritten when they moved (module docstring)."""
    stream = _current_stream(device_id).ptr
    sizes = tuple([a.size for a in lists[0]])
    key = (device_id, stream, sizes, tuple([a.ptr for a in lists[0]]), tuple([lst is None for lst in lists]))
    addresses = [[0] * len(sizes) if lst is None else [a.ptr for a in lst] for lst in lists]
    found = _tables.get(key)
    if found is None:
        found = _tables[key] = _new_table(addresses, sizes, device_id)
        if len(_tables) > _MAX_TABLES:
            _tables.popitem(last=False)
    else:
        _tables.move_to_end(key)
        if found.addresses != addresses:        # gradients elsewhere than last step: new address words
            pack = found.pack_addresses
            pack.pack_into(found.host, 0, *[ptr for lst in addresses for ptr in lst])
            _runtime.memcpyAsync(found.table.ptr, found.host_ptr, pack.size, _runtime.memcpyHostToDevice,
                                 stream)        # from pageable memory: staged before the call returns
            found.addresses = addresses
    return found.table, found.nchunks


def _new_table(addresses, sizes, device_id):
    """The _Table of ``addresses`` (one list per role) for tensors of ``sizes`` elements: the
    addresses, the sizes, then each chunk's tensor and first element, uploaded."""
    n = len(sizes)
    sizes = np.array(sizes, dtype=np.int64)
    pointers = np.array(addresses, dtype=np.uint64).reshape(len(addresses), n)
    chunks = (sizes + CHUNK - 1) // CHUNK                      # an empty tensor gets none
    first = np.cumsum(chunks) - chunks                         # the first chunk of each tensor
    tensor_of_chunk = np.repeat(np.arange(n, dtype=np.int64), chunks)
    start = (np.arange(int(chunks.sum()), dtype=np.int64) - np.repeat(first, chunks)) * CHUNK
    host = np.concatenate([pointers.view(np.int64).ravel(), sizes, tensor_of_chunk, start])
    return _Table(array.from_numpy(host, device_id), host, addresses, len(start))


def _checked(params, grads, states, what):
    """(suffix, M scalar type, grads made contiguous, GPU) after checking one dtype and layout."""
    dtype = params[0].dtype
    suffix = SUFFIX.get(dtype)
    if suffix not in _FLOATS:
        raise TypeError(f"{what} takes float32, float64, float16 or bfloat16 arrays, got {dtype}")
    written = [params] + [s for s in states if s is not None]
    # Every optimizer step passes here: the whole check in a few passes over the lists, and only
    # when something is wrong the slower walk that finds and names it
    shapes = [p.shape for p in params]
    if not (all([[a.shape for a in lst] == shapes for lst in [grads] + written])
            and all([a.dtype == dtype for lst in [grads] + written for a in lst])
            and all([a.c_contiguous for lst in written for a in lst])):
        _raise_first_problem(params, grads, written, dtype, what)
    grads = [g if g.c_contiguous else contiguous(g) for g in grads]
    return suffix, np.float64 if suffix == "f64" else np.float32, grads, params[0].device_id


def _raise_first_problem(params, grads, written, dtype, what):
    """Raise for the first array, parameter by parameter, of another dtype or shape, or not contiguous."""
    for k, p in enumerate(params):
        for a in [grads[k]] + [lst[k] for lst in written]:
            if a.dtype != dtype:
                raise TypeError(f"{what}: every array must be {dtype} (the first parameter's dtype), got {a.dtype}")
            if a.shape != p.shape:
                raise ValueError(f"{what}: an array of shape {a.shape} for a parameter of shape {p.shape}")
        if not all(lst[k].c_contiguous for lst in written):
            raise ValueError(f"{what} writes parameters and state in place: they must be contiguous "
                             f"(parameter {k} of shape {p.shape})")


def _launch(name, suffix, lists, device_id, scalars):
    table, nchunks = _table(lists, device_id)
    if nchunks:
        launch(kernel("multi_tensor.cu", f"{name}_{suffix}", device_id), (nchunks,), (BLOCK,),
               (table, len(lists[0])) + scalars, 0, device_id)


def adam_step(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, step, lr, beta1, beta2, eps,
              weight_decay, amsgrad, maximize, decoupled_weight_decay):
    """Adam/AdamW on every array of the lists, in ONE launch (see cpu.adam_step). ``step`` (>= 1)
    gives the bias corrections, computed here in double precision. Returns None.

    Raises:
        TypeError: mixed or non-floating dtypes. ValueError: non-contiguous param/state, shapes that differ.
    """
    if not params:
        return
    suffix, M, grads, dev = _checked(params, grads, (exp_avgs, exp_avg_sqs, max_exp_avg_sqs), "adam_step")
    step_size = lr / (1 - beta1 ** step)
    bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
    _launch("adam", suffix, (params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs if amsgrad else None), dev,
            (M(lr), M(beta1), M(beta2), M(eps), M(weight_decay), M(step_size), M(bias_correction2_sqrt),
             np.bool_(amsgrad), np.bool_(maximize), np.bool_(decoupled_weight_decay)))


def rmsprop_step(params, grads, square_avgs, grad_avgs, momentum_buffers, lr, alpha, eps, weight_decay, momentum,
                 centered, maximize):
    """RMSprop on every array of the lists, in ONE launch (see cpu.rmsprop_step). Returns None."""
    if not params:
        return
    suffix, M, grads, dev = _checked(params, grads, (square_avgs, grad_avgs, momentum_buffers), "rmsprop_step")
    _launch("rmsprop", suffix, (params, grads, square_avgs, grad_avgs if centered else None,
                                momentum_buffers if momentum > 0 else None), dev,
            (M(lr), M(alpha), M(eps), M(weight_decay), M(momentum), np.bool_(centered), np.bool_(maximize)))


def adagrad_step(params, grads, state_sums, step, lr, lr_decay, eps, weight_decay, maximize):
    """Adagrad on every array of the lists, in ONE launch (see cpu.adagrad_step). Returns None."""
    if not params:
        return
    suffix, M, grads, dev = _checked(params, grads, (state_sums,), "adagrad_step")
    clr = lr / (1 + (step - 1) * lr_decay)
    _launch("adagrad", suffix, (params, grads, state_sums), dev, (M(clr), M(eps), M(weight_decay), np.bool_(maximize)))


def sgd_step_list(params, grads, momentum_buffers, lr, momentum, dampening, weight_decay, nesterov, maximize,
                  first_step):
    """SGD on every array of the lists, in ONE launch: what ``sgd_step`` (optim.py, sgd.cu) does to
    each, to the bit. ``momentum_buffers`` is None when momentum is 0. Returns None."""
    if not params:
        return
    suffix, M, grads, dev = _checked(params, grads, (momentum_buffers,), "sgd_step_list")
    _launch("sgd", suffix, (params, grads, momentum_buffers if momentum else None), dev,
            (M(lr), M(momentum), M(1 - dampening), M(weight_decay), np.bool_(nesterov), np.bool_(maximize),
             np.bool_(first_step)))


# ---- gradient clipping ------------------------------------------------------------------------------
def _by_dtype(grads, first_last):
    """Non-empty grads grouped by dtype (in first-seen order; with ``first_last`` grads[0]'s dtype last)."""
    groups = {}
    for g in grads:
        if g.size:
            groups.setdefault(g.dtype, []).append(g)
    order = list(groups)
    if first_last and grads and grads[0].dtype in groups:
        order.remove(grads[0].dtype)
        order.append(grads[0].dtype)
    return [groups[d] for d in order]


def _counter(device_id):
    found = _counters.get(device_id)
    if found is None:
        found = _counters[device_id] = array.from_numpy(np.zeros(1, np.uint32), device_id)
    return found


def grads_norm(grads, norm_type, max_norm):
    """(total, coef) as cpu.grads_norm, computed on the GPU without a host synchronization: one
    launch per dtype among ``grads`` (contiguous arrays; usually one dtype: one launch). ``total``:
    a 0-d array of grads[0]'s dtype (unless grads[0] is empty); ``coef``: a 0-d float64 array,
    min(1, max_norm / (total + 1e-6)). Sums are accumulated in float64, per block, then across
    blocks in a fixed order: the same bits every run."""
    dev = grads[0].device_id
    groups = _by_dtype(grads, first_last=True)
    dtype = groups[-1][0].dtype if groups else grads[0].dtype      # the last launch writes the total
    total, coef = array.empty((), dtype, dev), array.empty((), np.dtype(np.float64), dev)
    if not groups:                          # nothing but empty tensors: norm 0, factor min(1, max_norm / 1e-6)
        fill_(total, 0.0)
        fill_(coef, min(1.0, max_norm / 1e-6))
        return total, coef
    p = float(norm_type)
    kind = 0 if p == float("inf") else 1 if p == 1 else 2 if p == 2 else 3
    group_totals = array.empty((len(groups),), np.dtype(np.float64), dev)
    for k, lst in enumerate(groups):
        table, nchunks = _table((lst,), dev)
        partials = array.empty((nchunks,), np.dtype(np.float64), dev)
        launch(kernel("multi_tensor.cu", f"grads_norm_{SUFFIX[lst[0].dtype]}", dev), (nchunks,), (BLOCK,),
               (table, len(lst), np.int32(kind), np.float64(p), partials, _counter(dev), group_totals, k,
                np.bool_(k == len(groups) - 1), np.float64(max_norm), total, coef), 0, dev)
    return total, coef


def grads_scale_(grads, coef):
    """grads[k] *= coef (a 0-d float64 DeviceArray, read on the GPU), in place: one launch per dtype."""
    for lst in _by_dtype(grads, first_last=False):
        _launch("grads_scale", SUFFIX[lst[0].dtype], (lst,), lst[0].device_id, (coef,))


def grads_clamp_(grads, clip_value):
    """Clamp every gradient to [-clip_value, clip_value], in place: one launch per dtype."""
    for lst in _by_dtype(grads, first_last=False):
        M = np.float64 if lst[0].dtype == np.float64 else np.float32
        _launch("grads_clamp", SUFFIX[lst[0].dtype], (lst,), lst[0].device_id, (M(clip_value),))
