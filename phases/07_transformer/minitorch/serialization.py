# GENERATED from minitorch/serialization.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 05
"""Checkpoints: ``minitorch.save(obj, f)`` and ``minitorch.load(f)``, in the safetensors format.

A checkpoint is a tree of plain values and tensors::

    minitorch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                    "scheduler": sched.state_dict(), "epoch": epoch}, "ckpt.safetensors")

The file is a safetensors file (https://huggingface.co/docs/safetensors): 8 bytes giving the
length of a JSON header, the header (each tensor's name, dtype, shape and byte range), then the
tensors' bytes. The tree (dicts, lists, tuples, numbers, strings) is written as JSON into one
entry of the header's ``__metadata__``, with each tensor replaced by a reference to its name.
Loading reads JSON and raw bytes, nothing else: unlike a pickle (what ``torch.save`` writes), a
file cannot run code when it is loaded.

Each tensor is named by its path in the tree (``"model.fc1.weight"``), so a saved state_dict is
also an ordinary safetensors file that other tools read. A plain safetensors file without our
metadata (``safetensors.torch.save_file(torch_model.state_dict(), path)``) loads as an
``OrderedDict`` name -> tensor, ready for ``model.load_state_dict``.
"""
import json
import os
from collections import OrderedDict

import ml_dtypes
import numpy as np
import safetensors
import safetensors.numpy

from .creation import from_numpy
from .device import device as Device
from .tensor import Tensor

__all__ = ["save", "load"]

_KEY = "minitorch"           # the __metadata__ entry holding our tree
_VERSION = 1

# safetensors dtype codes -> NumPy. Integer types minitorch lacks are widened to int64 on load.
_FROM_CODE = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": ml_dtypes.bfloat16,
              "I64": np.int64, "BOOL": np.bool_, "I32": np.int32, "I16": np.int16, "I8": np.int8,
              "U32": np.uint32, "U16": np.uint16, "U8": np.uint8}


# ---- saving ------------------------------------------------------------------------------------
def save(obj, f):
    """Write ``obj`` to ``f`` (a path or a binary file object).

    ``obj`` is a tree of dicts (``OrderedDict`` stays one; keys may be str, int, float, bool,
    None or tuples of them; other dict subclasses load as plain dicts), lists, tuples, str, int,
    float, bool, None and tensors of any dtype and device. Each tensor is stored once, compactly
    (a view stores only its own elements), and the same tensor (same memory, shape and strides)
    referenced twice is stored once and loads as one tensor.

    Raises:
        TypeError: for any other object, naming where it is in the tree.
    """
    tensors = {}            # name -> contiguous host array
    stored = {}             # (device, address, shape, strides, dtype) -> name already given
    tree = _encode(obj, (), tensors, stored)
    data = safetensors.numpy.save(tensors, metadata={_KEY: json.dumps({"version": _VERSION, "tree": tree})})
    if hasattr(f, "write"):
        f.write(data)
    else:
        with open(f, "wb") as out:
            out.write(data)


def _encode(obj, path, tensors, stored):
    """``obj`` as JSON: lists and scalars as themselves, everything else as a one-key object
    (``{"dict": [[key, value], ...]}``, ``{"tuple": [...]}``, ``{"tensor": {...}}``)."""
    if isinstance(obj, np.generic) and obj.dtype.kind in "biuf":
        obj = obj.item()                          # a NumPy scalar is saved as the Python number
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, Tensor):
        return {"tensor": _store(obj, path, tensors, stored)}
    if isinstance(obj, list):
        return [_encode(v, path + (str(i),), tensors, stored) for i, v in enumerate(obj)]
    if isinstance(obj, tuple):
        return {"tuple": [_encode(v, path + (str(i),), tensors, stored) for i, v in enumerate(obj)]}
    if isinstance(obj, dict):
        kind = "OrderedDict" if isinstance(obj, OrderedDict) else "dict"
        return {kind: [[_encode_key(k, path), _encode(v, path + (str(k),), tensors, stored)]
                       for k, v in obj.items()]}
    raise TypeError(f"minitorch.save: cannot save a {type(obj).__name__} at {_where(path)}: expected "
                    "tensors, dicts, lists, tuples, str, int, float, bool or None")


def _encode_key(key, path):
    if isinstance(key, tuple):
        return {"tuple": [_encode_key(k, path) for k in key]}
    if key is None or isinstance(key, (bool, str, int, float)):
        return key
    raise TypeError(f"minitorch.save: cannot save a dict key of type {type(key).__name__} at {_where(path)}")


def _where(path):
    return "the top level" if not path else "key " + ".".join(path)


def _store(t, path, tensors, stored):
    """Add ``t``'s elements to ``tensors`` under a name made from its path; the reference to it."""
    identity = (t.device, t.data_ptr(), tuple(t.shape), t.stride(), t.dtype)
    name = stored.get(identity)
    if name is None:
        name = base = ".".join(path) or "tensor"
        suffix = 1
        while name in tensors:                     # {"a.b": x, "a": {"b": y}} gives one path twice
            name, suffix = f"{base}#{suffix}", suffix + 1
        tensors[name] = np.require(t.detach()._host_array(), requirements="C")   # keeps 0-d arrays 0-d
        stored[identity] = name
    return {"name": name, "device": str(t.device), "requires_grad": t.requires_grad}


# ---- loading -----------------------------------------------------------------------------------
def load(f, map_location=None, weights_only=True):
    """Read what :func:`save` wrote (or any safetensors file) from ``f`` (a path or a binary file
    object).

    Args:
        map_location: where tensors go. ``None``: back to the device they were saved from
            (a plain safetensors file: cpu). A device (``"cpu"``, ``"cuda:0"``, a
            ``minitorch.device``): all of them there. A dict: saved location -> new location
            (``{"cuda:1": "cuda:0"}``), others stay. A callable ``fn(tensor, location)``: gets each
            tensor on the cpu and its saved location string, and returns the tensor to use (or
            ``None`` for the default), as ``torch.load`` calls it with storages.
        weights_only: accepted for ``torch.load``'s signature. Our files hold data only, so
            both values load the same way and nothing in a file can run code.

    Returns:
        The saved tree, or for a plain safetensors file an ``OrderedDict`` name -> tensor.

    Raises:
        RuntimeError: a truncated or corrupt file, or one that is not safetensors, naming the
            file and what is wrong.
        TypeError: a map_location of another kind.
    """
    place = _placement(map_location)
    data, name = _read_bytes(f)
    header = _read_header(data, name)
    raw = _deserialize(data, name)
    metadata = header.get("__metadata__") or {}
    if _KEY not in metadata:                  # a plain safetensors file: its tensors by name
        return OrderedDict((key, place(_tensor(raw[key], key, name), "cpu"))
                           for key in header if key != "__metadata__")
    return _decode(_parse_tree(metadata[_KEY], name), raw, place, name, {})


def _read_bytes(f):
    """(the whole file, a name for it in messages)."""
    if hasattr(f, "read"):
        return f.read(), getattr(f, "name", "the file object")
    with open(f, "rb") as file:
        return file.read(), os.fspath(f)


def _parse_tree(text, name):
    try:
        saved = json.loads(text)
        version, tree = saved["version"], saved["tree"]
    except (ValueError, KeyError, TypeError) as e:
        raise RuntimeError(f"{name}: corrupt minitorch checkpoint: its tree does not parse ({e!r})") from None
    if version != _VERSION:
        raise RuntimeError(f"{name}: checkpoint format version {version}, this minitorch reads {_VERSION}")
    return tree


def _read_header(data, name):
    """The JSON header, after checking that the file holds all that the header announces."""
    if len(data) < 8:
        raise RuntimeError(f"{name}: truncated or not a safetensors file: {len(data)} bytes, fewer than the "
                           "8 that give the header's length")
    size = int.from_bytes(data[:8], "little")
    if size > len(data) - 8:
        raise RuntimeError(f"{name}: truncated or not a safetensors file: its first 8 bytes announce a "
                           f"header of {size} bytes, but only {len(data) - 8} bytes follow")
    try:
        header = json.loads(data[8:8 + size], object_pairs_hook=OrderedDict)
    except ValueError as e:
        raise RuntimeError(f"{name}: not a safetensors file: its header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise RuntimeError(f"{name}: not a safetensors file: its header is a JSON {type(header).__name__}, "
                           "not an object")
    payload = len(data) - 8 - size
    for key, info in header.items():
        end = _data_end(info) if key != "__metadata__" else 0
        if end > payload:
            raise RuntimeError(f"{name}: truncated: tensor '{key}' ends at byte {end} of the data, but the file "
                               f"holds only {payload} bytes of data")
    return header


def _data_end(info):
    """Where a header entry says its bytes end (0 if it says nothing readable: safetensors checks)."""
    try:
        return int(info["data_offsets"][1])
    except (KeyError, IndexError, TypeError, ValueError):
        return 0


def _deserialize(data, name):
    try:
        return dict(safetensors.deserialize(data))
    except safetensors.SafetensorError as e:
        raise RuntimeError(f"{name}: corrupt safetensors file: {e}") from None


def _tensor(raw, key, name):
    """A cpu tensor over the bytes safetensors read (no copy)."""
    np_dtype = _FROM_CODE.get(raw["dtype"])
    if np_dtype is None:
        raise RuntimeError(f"{name}: tensor '{key}' has dtype {raw['dtype']}, which minitorch has no type for "
                           f"(it reads {', '.join(_FROM_CODE)})")
    return from_numpy(np.frombuffer(raw["data"], dtype=np_dtype).reshape(raw["shape"]))


def _decode(node, raw, place, name, loaded):
    if not isinstance(node, (list, dict)):
        return node
    if isinstance(node, list):
        return [_decode(v, raw, place, name, loaded) for v in node]
    (kind, value), = node.items()
    if kind == "tensor":
        if value["name"] not in loaded:        # a tensor saved once and referenced twice loads once
            t = place(_tensor(raw[value["name"]], value["name"], name), value["device"])
            loaded[value["name"]] = t.requires_grad_() if value["requires_grad"] else t
        return loaded[value["name"]]
    if kind == "tuple":
        return tuple(_decode(v, raw, place, name, loaded) for v in value)
    items = ((_decode_key(k), _decode(v, raw, place, name, loaded)) for k, v in value)
    return OrderedDict(items) if kind == "OrderedDict" else dict(items)


def _decode_key(key):
    return tuple(_decode_key(k) for k in key["tuple"]) if isinstance(key, dict) else key


def _placement(map_location):
    """``map_location`` as a function (cpu tensor, saved location) -> the tensor to return.

    Raises:
        TypeError: map_location is not None, a str, a device, a dict or a callable.
    """
    if map_location is None:
        return lambda t, location: t.to(location)
    if isinstance(map_location, (str, Device)):
        target = Device(map_location)
        return lambda t, location: t.to(target)
    if isinstance(map_location, dict):
        return lambda t, location: t.to(map_location.get(location, location))
    if callable(map_location):
        def call(t, location):
            moved = map_location(t, location)
            return t.to(location) if moved is None else moved
        return call
    raise TypeError(f"map_location should be None, a str, a minitorch.device, a dict or a callable, "
                    f"got {type(map_location).__name__}")
